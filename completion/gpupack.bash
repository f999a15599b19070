# bash completion for gpupack. What to offer comes from the binary itself
# (gpupack --completion-helper, read from each command's one option table:
# src/cmd/opttab.h), so completion cannot drift from the parsers; this file
# only knows the values a few options take (tests/cli/completion.t).
_gpupack() {
	local cur prev words cword
	_init_completion 2>/dev/null || {
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD-1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	}
	# the gpupack being completed (a build tree's too), else the one on PATH
	local gp=${words[0]/#\~/$HOME}
	command -v "$gp" >/dev/null 2>&1 || gp=gpupack
	local cmd="" sub="" subs="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--sim | --sim-write) ((i++)) ;;
		-*) ;;
		*)
			if [ -z "$cmd" ]; then
				cmd=${words[i]}
				# a command with subcommands lists them; one without, its options
				subs=$("$gp" --completion-helper "$cmd" 2>/dev/null | grep -v '^-')
			elif [ -z "$sub" ] && [ -n "$subs" ]; then
				sub=${words[i]}
			fi ;;
		esac
	done
	case $prev in
	--sim | --sim-write)
		# a topology file, or the name of an installed one
		local dir bin
		bin=$(dirname "$(command -v "$gp" 2>/dev/null || echo ./gpupack)")
		for dir in "$bin/../share/gpupack/topologies" "$bin/../topologies"; do
			[ -d "$dir" ] && COMPREPLY+=($(compgen -W "$(cd "$dir" && ls -- *.topo 2>/dev/null | sed 's/\.topo$//')" -- "$cur"))
		done
		COMPREPLY+=($(compgen -f -- "$cur"))
		return ;;
	esac
	if [ -z "$cmd" ]; then
		COMPREPLY=($(compgen -W "$("$gp" --completion-helper 2>/dev/null | sed 's/=.*//')" -- "$cur"))
		return
	fi
	if [ -n "$subs" ] && [ -z "$sub" ]; then
		COMPREPLY=($(compgen -W "$subs" -- "$cur"))
		return
	fi
	local opts
	opts=$("$gp" --completion-helper "$cmd" $sub 2>/dev/null)
	# the value of an option that takes one: what it takes, never the options
	if [[ $prev == -* ]] && printf '%s\n' "$opts" | grep -qx -- "$prev=.*"; then
		case $prev in
		--halt) COMPREPLY=($(compgen -W "never now,fail=1 soon,fail=1 now,success=1 now,done=1" -- "$cur")) ;;
		--trim) COMPREPLY=($(compgen -W "n l r lr" -- "$cur")) ;;
		--share) COMPREPLY=($(compgen -W "exclusive timeslice mps" -- "$cur")) ;;
		-j | --jobs) COMPREPLY=($(compgen -W "auto auto: 0 1 2 4 8" -- "$cur")) ;;
		--priority) COMPREPLY=($(compgen -W "normal low" -- "$cur")) ;;
		--modes) COMPREPLY=($(compgen -W "timeslice mps streams batched" -- "$cur")) ;;
		--shard) COMPREPLY=($(compgen -W "slurm" -- "$cur")) ;;
		*)
			case $(printf '%s\n' "$opts" | grep -m1 -x -- "$prev=.*") in
			*FILE | *DIR) COMPREPLY=($(compgen -f -- "$cur")) ;;
			*) COMPREPLY=() ;;   # a number, a size, a device: nothing to guess
			esac ;;
		esac
		return
	fi
	case $cmd/$sub in
	timeslice/set) [[ $cur != -* ]] && { COMPREPLY=($(compgen -W "default short medium long" -- "$cur")); return; } ;;
	mig/apply) [[ $cur != -* ]] && { COMPREPLY=($(compgen -f -- "$cur")); return; } ;;
	esac
	local extra=""
	case $cmd in
	run) extra="::: :::+ :::: ::::+" ;;
	bench) extra="--" ;;
	mps) [ "$sub" = exec ] && extra="--" ;;
	esac
	COMPREPLY=($(compgen -W "$(printf '%s\n' "$opts" | sed 's/=.*//') $extra" -- "$cur"))
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
