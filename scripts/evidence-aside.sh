#!/usr/bin/env bash
# Takes evidence/ out of what a device call sends, and puts it back: the device tool sends the
# checkout's tracked files (64 MiB with what a call carries), and the evidence databases (tens of
# MB, growing with every GPU session) are not needed on the GPU node. Local to this checkout:
# main is not touched, and nothing is deleted from disk.
#
#   scripts/evidence-aside.sh aside   evidence/ leaves the index (git rm --cached) and is ignored
#                                     (.git/info/exclude); its files stay where they are
#   scripts/evidence-aside.sh back    the index entries come back from HEAD and the ignore goes
#   scripts/evidence-aside.sh size    bytes of what a call would send now, carried paths aside
#
# `aside` refuses while evidence/ has changes of its own (commit them first), and `back` checks
# that evidence/ is again exactly HEAD's. Between the two, commit nothing: a commit would delete
# evidence/ from main. Run `back` straight after the device call.
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
exclude=$(git rev-parse --git-path info/exclude)
marker='/evidence/'
size() {
  # Tracked files present on disk and untracked files not ignored: what travels.
  { git ls-files -z; git ls-files -z --others --exclude-standard; } |
    du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1
}
case ${1:-} in
  aside)
    if grep -qxF "$marker" "$exclude" 2>/dev/null; then
      echo "evidence-aside: evidence/ is already aside or ignored in $exclude (scripts/evidence-aside.sh back)" >&2
      exit 1
    fi
    if [[ -n $(git status --porcelain -- evidence) ]]; then
      echo "evidence-aside: evidence/ has changes not committed; commit them first:" >&2
      git status --short -- evidence >&2
      exit 1
    fi
    mkdir -p "$(dirname "$exclude")"
    echo "$marker" >>"$exclude"
    git rm -r -q --cached evidence
    echo "evidence/ aside: $(size) bytes travel now; run 'scripts/evidence-aside.sh back' after the call"
    ;;
  back)
    if ! grep -qxF "$marker" "$exclude" 2>/dev/null; then
      echo "evidence-aside: evidence/ is not aside" >&2
      exit 1
    fi
    git reset -q HEAD -- evidence
    grep -vxF "$marker" "$exclude" >"$exclude.new" || true
    mv "$exclude.new" "$exclude"
    if [[ -n $(git status --porcelain -- evidence) ]]; then
      echo "evidence-aside: evidence/ differs from HEAD after putting it back:" >&2
      git status --short -- evidence >&2
      exit 1
    fi
    echo "evidence/ back: $(size) bytes travel now"
    ;;
  size) size ;;
  *)
    echo "usage: scripts/evidence-aside.sh aside|back|size" >&2
    exit 2
    ;;
esac
