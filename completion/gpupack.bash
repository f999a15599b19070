# bash completion for gpupack
_gpupack() {
	local cur prev words cword
	_init_completion 2>/dev/null || {
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD-1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	}
	local cmd="" sub="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--sim | --sim-write) ((i++)) ;;
		-*) ;;
		*) if [ -z "$cmd" ]; then cmd=${words[i]}; elif [ -z "$sub" ]; then sub=${words[i]}; fi ;;
		esac
	done
	case $prev in
	--sim | --sim-write)
		# a topology file, or the name of an installed one
		local dir
		for dir in "$(dirname "$(command -v gpupack 2>/dev/null || echo .)")/../share/gpupack/topologies"; do
			[ -d "$dir" ] && COMPREPLY=($(compgen -W "$(cd "$dir" && ls *.topo 2>/dev/null | sed 's/\.topo$//')" -- "$cur"))
		done
		COMPREPLY+=($(compgen -f -- "$cur"))
		return ;;
	--requests | --joblog | -a | --arg-file | --save | --out | --svg | --results | --wd | --tmpdir)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--halt) COMPREPLY=($(compgen -W "never now,fail=1 soon,fail=1 now,success=1 now,done=1" -- "$cur")); return ;;
	--trim) COMPREPLY=($(compgen -W "n l r lr" -- "$cur")); return ;;
	--share) COMPREPLY=($(compgen -W "exclusive timeslice mps" -- "$cur")); return ;;
	-j | --jobs) COMPREPLY=($(compgen -W "auto auto:" -- "$cur")); return ;;
	--priority) COMPREPLY=($(compgen -W "normal low" -- "$cur")); return ;;
	esac
	case $cmd in
	"") COMPREPLY=($(compgen -W "devices mps timeslice mig run bench --sim --sim-write --version --help" -- "$cur")) ;;
	devices) COMPREPLY=($(compgen -W "--json --profiles --gpus" -- "$cur")) ;;
	mps)
		if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "start stop status env exec" -- "$cur"))
		else
			case $sub in
			start) COMPREPLY=($(compgen -W "--gpus --all --sm --mem --priority --restart" -- "$cur")) ;;
			stop) COMPREPLY=($(compgen -W "--gpus --all --timeout --force" -- "$cur")) ;;
			status) COMPREPLY=($(compgen -W "--gpus --json" -- "$cur")) ;;
			env) COMPREPLY=($(compgen -W "--gpus" -- "$cur")) ;;
			exec) COMPREPLY=($(compgen -W "--gpus --sm --mem --priority --" -- "$cur")) ;;
			esac
		fi ;;
	timeslice)
		if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "get set" -- "$cur"))
		elif [ "$sub" = get ]; then COMPREPLY=($(compgen -W "--gpus --json" -- "$cur"))
		else COMPREPLY=($(compgen -W "default short medium long --gpus --dry-run" -- "$cur")); fi ;;
	mig)
		if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "profiles plan apply clear" -- "$cur"))
		else
			# each subcommand's own flags (plan takes no --dry-run, apply no --json)
			case $sub in
			profiles) COMPREPLY=($(compgen -W "--gpus --json" -- "$cur")) ;;
			plan) COMPREPLY=($(compgen -W "--gpus --json --want --requests --save" -- "$cur")) ;;
			apply) COMPREPLY=($(compgen -f -W "--gpus --dry-run --enable-mig --want --requests" -- "$cur")) ;;
			clear) COMPREPLY=($(compgen -W "--gpus --dry-run" -- "$cur")) ;;
			esac
		fi ;;
	run)
		# every option of gpupack run --help (tests/cli/run-options.t checks it)
		local run_opts="--gpus --share -j --jobs --total --mem --sm --env --shard -a --arg-file -0
			--null -d --delimiter -C --colsep --csv --header --link -n --max-args -N
			--max-replace-args -L -l --max-lines -X -m --xargs -s --max-chars -I -i
			--replace --extensionreplace --basenamereplace --dirnamereplace
			--basenameextensionreplace --seqreplace --slotreplace --plus --rpl
			--parens -r --no-run-if-empty -E -e --eof --trim --arg-sep --arg-file-sep
			--filter --skip-first-line --shuf --total-jobs -q --quote --shell -v -t
			--verbose --dry-run --wd --nice --tmpdir --process-slot-var --shellquote
			--joblog --resume --resume-failed --retry-failed --retries --timeout
			--load --noswap --memfree --delay --halt --results -k --keep-order
			--no-keep-order --files --tag --tagstring --line-buffer -u --ungroup
			--group --bar --eta --progress --summary --json --pipe --pipe-part
			--block-size --recstart --recend --regexp --remove-rec-sep --tee --cat --fifo -J
			--profile --plain -V --version -h --help --minversion --number-of-cpus
			--number-of-cores --number-of-threads --number-of-sockets
			--max-line-length-allowed --will-cite --silent --compress
			--compress-program --decompress-program --gnu -x --exit
			--use-cpus-instead-of-cores --use-cores-instead-of-threads
			--use-sockets-instead-of-threads"
		COMPREPLY=($(compgen -W "$run_opts ::: :::+ :::: ::::+" -- "$cur")) ;;
	bench) COMPREPLY=($(compgen -W "--quick --sizes --procs --modes --exercises --repeats --max-repeats --time --mixed-size --caps-sizes --tasks --margin --timeout --cpu-ms --gpus --json --out --svg --progress --" -- "$cur")) ;;
	esac
}
complete -F _gpupack gpupack

# The Slurm plugin's option on sbatch, salloc and srun (gpupack_spank.so, doc/slurm.md):
# --gpupack-mps=sm=PCT,mem=SIZE,priority=normal|low or off. Registered only where
# nothing completes those commands already, so that Slurm's own completion wins.
_gpupack_slurm() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	case $cur in
	--gpupack-mps=*)
		local items=${cur#--gpupack-mps=} done_part=""
		case $items in *,*) done_part=${items%,*},; items=${items##*,} ;; esac
		COMPREPLY=($(compgen -P "--gpupack-mps=$done_part" -W "sm= mem= priority=normal priority=low off" -- "$items"))
		compopt -o nospace 2>/dev/null ;;
	--g*) COMPREPLY=($(compgen -W "--gpupack-mps --gpupack-mps= --gres= --gpus= --gpus-per-task=" -- "$cur")) ;;
	*) COMPREPLY=($(compgen -f -- "$cur")) ;;
	esac
}
for _c in sbatch salloc srun; do
	complete -p "$_c" >/dev/null 2>&1 || complete -F _gpupack_slurm "$_c"
done
unset _c
