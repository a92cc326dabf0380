# tests/cli/zsh_complete.zsh DIR LINE WANT: types LINE and a tab into an
# interactive zsh (zsh/zpty) whose $fpath starts with DIR (where _dtplan is)
# and exits 0 when what the line becomes holds WANT within 10 s.  Run with
# zsh -f, by tests/cli/test_completion.sh.
dir=$1 line=$2 want=$3 got= out=
zmodload zsh/zpty || exit 2
zpty z zsh -f -i
zpty -w z "fpath=($dir \$fpath); autoload -Uz compinit; compinit -u -D; PS1='> '"
zpty -w z "print READY"
zpty -r z out '*READY*'
zpty -r z out '*> '
zpty -w -n z "$line"$'\t'
for i in {1..100}; do
	if zpty -r -t z out; then
		got+=$out
		[[ ${got//$'\b'/} == *"$want"* ]] && break
	else
		sleep 0.1
	fi
done
zpty -d z
print -r -- "${got//$'\b'/}"
[[ ${got//$'\b'/} == *"$want"* ]]
