# shellcheck shell=bash
# Sourced by the obtain-*.sh scripts: builds pinned Go tools into the Capstan cache
# (${CAPSTAN_CACHE:-$HOME/.cache/capstan}/<tool>/<version>/) with the machine's Go toolchain
# (GOTOOLCHAIN=local: never a toolchain download), one build per machine at a time (flock), progress
# every 30 s while compiling, and an atomic publish (optionally with a STAMP of what was built).
#
# The sourcing script calls gt_parse_args, sets the GT_* variables, defines two functions and
# calls gt_obtain:
#   GT_NAME      message prefix, e.g. obtain-helm
#   GT_DIR       the tool's cache directory (holds .lock-<GT_KEY> and the .build-<GT_KEY>.* work dirs)
#   GT_KEY       the version the lock and work directories are named after
#   GT_BINDIR    where the finished binaries live
#   GT_BINARIES  (array) the binaries gt_build leaves in its work directory, moved into GT_BINDIR
#   GT_FILES     (array, optional) other files gt_build leaves in WORK, published with the binaries
#   GT_STAMP     optional: what GT_BINDIR/STAMP must say for a build to count as current
#   GT_NOT_CACHED, GT_NO_GO   optional: the --check and no-Go messages
#   gt_build WORK    builds every binary of GT_BINARIES into WORK (gt_go_progress helps)
#   gt_finish        reports the result (a path on stdout with the print flag, else a message)

gt_say() { echo "$GT_NAME: $*" >&2; }

# gt_parse_args PRINT_FLAG ARGS...: --check, --force, PRINT_FLAG (e.g. --print-path), -h/--help.
gt_parse_args() {
  local print_flag="$1"; shift
  gt_check=0 gt_force=0 gt_print=0
  local arg
  for arg in "$@"; do
    case "$arg" in
      --check) gt_check=1 ;;
      --force) gt_force=1 ;;
      "$print_flag") gt_print=1 ;;
      # The script's own header comment is its help.
      -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
      *) echo "$GT_NAME: unknown argument: $arg" >&2; exit 2 ;;
    esac
  done
}

gt_is_current() {
  local b
  for b in "${GT_BINARIES[@]}"; do [[ -x "$GT_BINDIR/$b" ]] || return 1; done
  [[ -z "${GT_STAMP:-}" ]] && return 0
  [[ -f "$GT_BINDIR/STAMP" && "$(cat "$GT_BINDIR/STAMP")" == "$GT_STAMP" ]]
}

# Sets go_cmd: $GO, else go on PATH, else /usr/local/go/bin/go.
gt_find_go() {
  go_cmd="${GO:-}"
  [[ -n "$go_cmd" ]] && return 0
  if command -v go >/dev/null 2>&1; then go_cmd=go
  elif [[ -x /usr/local/go/bin/go ]]; then go_cmd=/usr/local/go/bin/go
  else gt_say "${GT_NO_GO:-no Go toolchain found: install Go or set GO=/path/to/go}"; exit 1
  fi
}

# gt_go_progress LABEL LOG DIR GO-ARGS...: runs `go GO-ARGS` in DIR (-v belongs in GO-ARGS) with
# its output in LOG, saying every 30 s how many packages it has compiled, so a long first build is
# never silent; on failure prints the log's last lines and exits.
gt_go_progress() {
  local label="$1" log="$2" dir="$3" start=$SECONDS rc pid
  shift 3
  (cd "$dir" && "$go_cmd" "$@") >"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 1 30); do
      sleep 1
      kill -0 "$pid" 2>/dev/null || break
    done
    if kill -0 "$pid" 2>/dev/null; then
      gt_say "[$label] still compiling: $(grep -c -v '^go: ' "$log" || true) packages so far, $((SECONDS - start))s elapsed"
    fi
  done
  if wait "$pid"; then rc=0; else rc=$?; fi
  if [[ $rc != 0 ]]; then
    gt_say "[$label] build FAILED (exit $rc) after $((SECONDS - start))s; last lines of the log:"
    tail -n 40 "$log" >&2
    exit "$rc"
  fi
  gt_say "[$label] built in $((SECONDS - start))s"
}

# gt_go_install WORK BINARY PACKAGE VERSION: builds a tool with `go install PACKAGE@VERSION` outside
# any module, which builds exactly the module graph that version pins, into WORK/BINARY.
gt_go_install() {
  local work="$1" binary="$2" package="$3" version="$4"
  gt_say "building $package@$version with $("$go_cmd" version)"
  export GOBIN="$work"
  gt_go_progress "$binary" "$work/build.log" "$work" install -v -trimpath -ldflags='-s -w' "$package@$version"
  "$work/$binary" version >&2
}

gt_obtain() {
  if [[ $gt_force == 0 ]] && gt_is_current; then
    [[ $gt_check == 1 ]] && exit 0
    gt_finish
    exit 0
  fi
  if [[ $gt_check == 1 ]]; then
    gt_say "${GT_NOT_CACHED:-not cached in $GT_BINDIR; run: bash test/scripts/$GT_NAME.sh}"
    exit 1
  fi
  gt_find_go

  mkdir -p "$GT_DIR"
  # One build at a time per machine: parallel test runs wait for the first one's build.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$GT_DIR/.lock-$GT_KEY"
    if ! flock -n 9; then gt_say "another build of $GT_KEY is running; waiting for it"; flock 9; fi
    if [[ $gt_force == 0 ]] && gt_is_current; then gt_finish; exit 0; fi
  fi

  gt_work="$(mktemp -d "$GT_DIR/.build-$GT_KEY.XXXXXX")"
  trap 'rm -rf "$gt_work"' EXIT
  export CGO_ENABLED=0
  export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
  local start=$SECONDS b
  gt_build "$gt_work"

  # Publish atomically: the directory holds complete (stamped) binaries or nothing from this run.
  mkdir -p "$GT_BINDIR"
  for b in "${GT_BINARIES[@]}" ${GT_FILES[@]+"${GT_FILES[@]}"}; do mv -f "$gt_work/$b" "$GT_BINDIR/$b"; done
  if [[ -n "${GT_STAMP:-}" ]]; then
    printf '%s\n' "$GT_STAMP" >"$GT_BINDIR/STAMP.tmp"
    mv -f "$GT_BINDIR/STAMP.tmp" "$GT_BINDIR/STAMP"
  fi
  gt_say "total build time $((SECONDS - start))s"
  gt_finish
}
