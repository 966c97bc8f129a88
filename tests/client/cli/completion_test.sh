#!/usr/bin/env bash
# The completion scripts `ablation-client completion bash|zsh` prints: valid syntax, and what
# they complete. bash: the completion function called as bash calls it (COMP_WORDS, COMP_CWORD),
# COMPREPLY checked. zsh (skipped, exit 77, where zsh is not installed): `zsh -n`, then the
# function run with stand-ins for _arguments and _describe that show what it hands them.
#   completion_test.sh CLIENT
set -euo pipefail
client=${1:?usage: completion_test.sh CLIENT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

"$client" completion bash >"$tmp/ablation-client.bash"
bash -n "$tmp/ablation-client.bash"
if command -v shellcheck >/dev/null; then
  shellcheck -s bash "$tmp/ablation-client.bash" || { echo "FAIL: shellcheck of the bash script"; fail=1; }
fi

# A stand-in daemon lookup: the client the script runs for variant and preset names (the first
# word of the line), answering as the real one does (CSV, CRLF) and noting how it was called.
cat >"$tmp/fake-client" <<'FAKE'
#!/usr/bin/env bash
echo "$*" >>"${0%/*}/fake-calls"
case " $* " in
  *" variants "*) printf 'name,family,dtypes\r\nabl_L1_R1_bl0_s3_sw1,ablation,bf16\r\ncublas_fp16,cublas,fp16\r\nuser.tiled.pad=0.unroll=1,user.tiled,bf16\r\nuser.tiled.pad=0.unroll=4,user.tiled,bf16\r\nuser.tiled.pad=1.unroll=1,user.tiled,bf16\r\nuser.tiled@1.pad=0.unroll=1,user.tiled,bf16\r\n' ;;
  *" presets "*) printf 'name,dtypes\r\nladder-a,bf16\r\nladder-b,bf16\r\n' ;;
esac
FAKE
chmod +x "$tmp/fake-client"

# Completes the words given (the last is the one being completed); prints COMPREPLY, sorted,
# on one line.
complete_words() {
  bash -c '
    source "$1"
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="${COMP_WORDS[*]}"
    COMP_POINT=${#COMP_LINE}
    _ablation_client 2>/dev/null
    printf "%s\n" "${COMPREPLY[@]}"
  ' _ "$tmp/ablation-client.bash" "$@" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ *$//'
}
expect() {
  local want=$1 got
  shift
  got=$(complete_words "$@")
  if [[ $got != "$want" ]]; then
    echo "FAIL: completing '$*': got '$got', want '$want'"
    fail=1
  fi
}
expect_has() {  # the reply holds every word of $1
  local want=$1 got w
  shift
  got=" $(complete_words "$@") "
  for w in $want; do
    [[ $got == *" $w "* ]] || { echo "FAIL: completing '$*': no '$w' in '$got'"; fail=1; }
  done
}

expect "run runs" ablation-client ru
expect "report results" ablation-client re
expect "compare completion" ablation-client comp
expect "cancelled failed partial queued running succeeded" ablation-client runs --state ""
expect "fp16 fp32 fp8" ablation-client run --dtype fp
expect "bash zsh" ablation-client completion ""
expect "latest" ablation-client show l
expect "latest" ablation-client report ""
expect "html" ablation-client report -f h
expect "json" ablation-client --format = j
expect "base max" ablation-client sweep --preset x --lock-sm-clock ""
# The subcommand is found behind global options and their values.
expect "run runs" ablation-client --server host:1 -q ru
expect "--dtype" ablation-client --server host:1 run --dt
# Options: the command's and the global ones; flags take no value.
expect_has "--variant -v --dtype --rounds --lock-sm-clock --server --format --output -o --width" \
  ablation-client run -
expect_has "--preset --rounds --min-samples --flush-l2" ablation-client sweep --verify --
expect "--version" ablation-client --vers
# A file for -o.
touch "$tmp/report-1.html"
expect "$tmp/report-1.html" ablation-client report -o "$tmp/report-"
# Names from the daemon, asked with the --server of the line.
expect "abl_L1_R1_bl0_s3_sw1" "$tmp/fake-client" --server host:7 run -v abl
expect "abl_L1_R1_bl0_s3_sw1 cpu cublas cublas_fp16 user.tiled.pad=0.unroll=1 user.tiled.pad=0.unroll=4 user.tiled.pad=1.unroll=1 user.tiled@1.pad=0.unroll=1" \
  "$tmp/fake-client" verify --against ""
expect "ladder-a ladder-b" "$tmp/fake-client" sweep --preset ""
expect "abl_L1_R1_bl0_s3_sw1" "$tmp/fake-client" --tls --token-file /t run -v abl
# A user variant's name holds '=', at which bash splits words: completed past each '=' (bash
# replaces only what follows the last one), and an option's own '=' still works.
expect "user.tiled.pad=0.unroll=1 user.tiled.pad=0.unroll=4 user.tiled.pad=1.unroll=1 user.tiled@1.pad=0.unroll=1" \
  "$tmp/fake-client" run -v user.t
expect "0.unroll=1 0.unroll=4" "$tmp/fake-client" run -v user.tiled.pad = 0
expect "1 4" "$tmp/fake-client" run -v user.tiled.pad = 0.unroll = ""
expect "4" "$tmp/fake-client" run --variant = user.tiled.pad = 0.unroll = 4
expect "1" "$tmp/fake-client" run -v user.tiled.pad = 0.unroll = 1 -v user.tiled.pad = 1.unroll = ""
# An older version's name holds '@', another word break of bash's.
expect "1.pad=0.unroll=1" "$tmp/fake-client" run -v user.tiled @ ""
expect "1" "$tmp/fake-client" run -v user.tiled @ 1.pad = 0.unroll = ""
grep -q -- "--tls --token-file /t --timeout 2 variants --format csv" "$tmp/fake-calls" ||
  { echo "FAIL: the variant names were not asked with --tls --token-file: $(cat "$tmp/fake-calls")"; fail=1; }
grep -q -- "--server host:7 --timeout 2 variants --format csv" "$tmp/fake-calls" ||
  { echo "FAIL: the variant names were not asked of --server host:7: $(cat "$tmp/fake-calls")"; fail=1; }

if ! command -v zsh >/dev/null; then
  echo "zsh is not installed: the bash script passed, the zsh one is not checked"
  ((fail == 0)) && exit 77
  exit 1
fi

"$client" completion zsh >"$tmp/_ablation-client"
zsh -n "$tmp/_ablation-client"
head -n1 "$tmp/_ablation-client" | grep -qx '#compdef ablation-client' ||
  { echo "FAIL: the zsh script does not start with #compdef ablation-client"; fail=1; }

# Stand-ins: _arguments says what it was handed and, for the top level, which state to enter;
# _describe prints the candidates of the array it is given.
zsh_run() {  # STATE LINE: the state the top-level _arguments enters, the words of $line
  STATE=$1 LINE=$2 zsh -f -c '
    compdef() { print -r -- "compdef $*"; }
    _arguments() {
      local spec
      for spec in "$@"; do print -r -- "spec: $spec"; done
      if [[ " $* " == *" 1:command:->command "* ]]; then
        state=$STATE
        line=(${=LINE})
      fi
      return 1
    }
    _describe() { local name=$4; print -rl -- "${(@P)name}"; }
    source "$1"
    words=(ablation-client)
    CURRENT=2
    _ablation_client || true  # the stand-ins complete nothing
  ' _ "$tmp/_ablation-client"
}
out=$(zsh_run command "")
grep -qx "compdef _ablation_client ablation-client" <<<"$out" ||
  { echo "FAIL: sourcing the zsh script does not register _ablation_client: $out"; fail=1; }
for want in "run:Run variants x shapes on a GPU" "runs:List runs, newest first" "completion:Print"; do
  grep -q "^$want" <<<"$out" || { echo "FAIL: zsh commands lack '$want'"; fail=1; }
done
out=$(zsh_run argument run)
for want in "spec: *--variant[" ":variant:_ablation_client_variants" \
  "spec: --dtype[" ":dtype:(bf16 fp16 fp32 tf32 int8 fp8)" "spec: --lock-sm-clock[" \
  ":lock-sm-clock:(base max)" "spec: --format[" ":format:(table json csv markdown md html)" \
  "spec: --output[" ":output:_files"; do
  grep -qF -- "$want" <<<"$out" || { echo "FAIL: zsh 'run' specs lack '$want'"; fail=1; }
done
out=$(zsh_run argument runs)
grep -qF -- ":state:(queued running succeeded partial failed cancelled)" <<<"$out" ||
  { echo "FAIL: zsh 'runs --state' does not complete the states: $out"; fail=1; }
out=$(zsh_run argument compare)
grep -qF -- "spec: 1:RUN_A:(latest)" <<<"$out" && grep -qF -- "spec: 2:RUN_B:(latest)" <<<"$out" ||
  { echo "FAIL: zsh 'compare' positionals: $out"; fail=1; }

((fail == 0)) && echo "completion: bash and zsh scripts complete as expected"
exit "$fail"
