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
		--sim) ((i++)) ;;
		-*) ;;
		*) if [ -z "$cmd" ]; then cmd=${words[i]}; elif [ -z "$sub" ]; then sub=${words[i]}; fi ;;
		esac
	done
	case $prev in
	--sim | --requests | --joblog | -a | --arg-file | --save | --out | --svg | --results)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--share) COMPREPLY=($(compgen -W "exclusive timeslice mps" -- "$cur")); return ;;
	--priority) COMPREPLY=($(compgen -W "normal low" -- "$cur")); return ;;
	esac
	case $cmd in
	"") COMPREPLY=($(compgen -W "devices mps timeslice mig run bench --sim --version --help" -- "$cur")) ;;
	devices) COMPREPLY=($(compgen -W "--json --profiles --gpu" -- "$cur")) ;;
	mps)
		if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "start stop status env exec" -- "$cur"))
		else COMPREPLY=($(compgen -W "--gpu --all --sm --mem --priority --restart --json --timeout --force" -- "$cur")); fi ;;
	timeslice)
		if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "get set" -- "$cur"))
		else COMPREPLY=($(compgen -W "default short medium long --gpu --json --dry-run" -- "$cur")); fi ;;
	mig)
		if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "profiles plan apply clear" -- "$cur"))
		else
			# each subcommand's own flags (plan takes no --dry-run, apply no --json)
			case $sub in
			profiles) COMPREPLY=($(compgen -W "--gpu --json" -- "$cur")) ;;
			plan) COMPREPLY=($(compgen -W "--gpu --json --want --requests --save" -- "$cur")) ;;
			apply) COMPREPLY=($(compgen -f -W "--gpu --dry-run --enable-mig --want --requests" -- "$cur")) ;;
			clear) COMPREPLY=($(compgen -W "--gpu --dry-run" -- "$cur")) ;;
			esac
		fi ;;
	run) COMPREPLY=($(compgen -W "--gpus --share -j --jobs --total --mem --sm --env -a --arg-file --shell --joblog --resume --resume-failed --retries --timeout --halt --results --shard -k --keep-order --bar --eta --summary --json --dry-run ::: ::::" -- "$cur")) ;;
	bench) COMPREPLY=($(compgen -W "--quick --sizes --procs --modes --exercises --repeats --max-repeats --time --mixed-size --caps-sizes --tasks --margin --timeout --cpu-ms --gpu --json --out --svg --progress --" -- "$cur")) ;;
	esac
}
complete -F _gpupack gpupack
