#!/usr/bin/env bash
# scripts/evidence-aside.sh in a repository of its own: `aside` takes evidence/ out of the index
# and ignores it, keeping its files on disk and shrinking what travels; `back` restores exactly
# HEAD's; each refuses what would lose or hide a change.
#   evidence_aside_test.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: evidence_aside_test.sh SOURCE_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work" || exit 1
git init -q . && git config user.email t@example.com && git config user.name test
mkdir -p scripts evidence/a src
cp "$src/scripts/evidence-aside.sh" scripts/
head -c 1048576 /dev/urandom >evidence/a/run.db.xz
echo "run.db.xz: report 1 => x" >evidence/a/COMMANDS
echo "int main() {}" >src/main.cc
git add -A && git commit -qm seed
script=scripts/evidence-aside.sh
before=$($script size) || fail "size"

$script aside >out.txt 2>&1 || fail "aside: $(cat out.txt)"
rm -f out.txt
[[ -z $(git ls-files evidence) ]] || fail "evidence/ still in the index"
[[ -f evidence/a/run.db.xz ]] || fail "evidence/ files removed from disk"
[[ -z $(git ls-files --others --exclude-standard evidence) ]] || fail "evidence/ not ignored"
[[ $(git ls-files) == *src/main.cc* ]] || fail "other files left the index"
during=$($script size)
((before - during >= 1048576)) || fail "size did not drop by evidence/'s bytes: $before -> $during"
$script aside >/dev/null 2>&1 && fail "a second aside was not refused"

$script back >/dev/null || fail "back"
[[ -z $(git status --porcelain) ]] || fail "not HEAD's after back: $(git status --short)"
[[ $(git ls-files evidence | wc -l) -eq 2 ]] || fail "evidence/ not back in the index"
grep -qx '/evidence/' .git/info/exclude && fail "the ignore stayed"
$script back >/dev/null 2>&1 && fail "back without aside was not refused"
[[ $($script size) -eq $before ]] || fail "size after back differs"

# A change of evidence/ not committed: aside refuses and names it; the index is untouched.
echo more >>evidence/a/COMMANDS
msg=$($script aside 2>&1) && fail "aside with a change in evidence/ was not refused"
[[ $msg == *"evidence/a/COMMANDS"* ]] || fail "the refusal does not name the change: $msg"
[[ $(git ls-files evidence | wc -l) -eq 2 ]] || fail "a refused aside changed the index"
echo "evidence-aside: ok"
