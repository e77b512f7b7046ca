# scripts/bench-lib.sh - what every scripts/bench-* prints besides its own
# figures (sourced, not run): CPU time beside wall time, and the load
# average at start and end. These machines are shared; wall time swings
# 2-4x with their load, CPU time much less, so the rates are per CPU-second.
#
#   bench_begin NAME      prints "NAME: load average at start A B C"
#   bench_cpu             sets BENCH_CPU: user+sys seconds of this shell's
#                         waited-for children so far (getrusage
#                         RUSAGE_CHILDREN, via bash's `times`; call it
#                         directly, never inside $(...), a subshell)
#   bench_timed CMD...    runs CMD; sets BT_CPU (user+sys of CMD and its
#                         children, s) and BT_WALL (s); CMD's status returned
#   bench_end             prints total CPU and wall, and the load at the end
BENCH_TIMES=$(mktemp "${TMPDIR:-/tmp}/bench-times.XXXXXX")
trap 'rm -f "$BENCH_TIMES"' EXIT
bench_cpu() {
	# times: line 2 = children "XmY.YYYs XmY.YYYs" (user sys); a builtin
	# with a redirection runs in this shell (in a pipe it would not)
	times >"$BENCH_TIMES"
	BENCH_CPU=$(awk 'NR == 2 {
		n = split($1, u, /[ms]/); m = split($2, s, /[ms]/);
		printf "%.3f\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$BENCH_TIMES")
}
bench_now() { date +%s.%N; }
bench_load() { cut -d' ' -f1-3 /proc/loadavg; }
bench_begin() {
	BENCH_NAME=$1
	bench_cpu
	BENCH_CPU0=$BENCH_CPU
	BENCH_WALL0=$(bench_now)
	echo "$BENCH_NAME: load average at start $(bench_load) ($(nproc) CPUs)"
}
bench_timed() {
	local c0 w0 rc=0
	bench_cpu
	c0=$BENCH_CPU
	w0=$(bench_now)
	"$@" || rc=$?
	bench_cpu
	BT_CPU=$(awk -v a="$BENCH_CPU" -v b="$c0" 'BEGIN { printf "%.3f", a - b }')
	BT_WALL=$(awk -v a="$(bench_now)" -v b="$w0" 'BEGIN { printf "%.3f", a - b }')
	return $rc
}
bench_end() {
	bench_cpu
	awk -v n="$BENCH_NAME" -v c="$BENCH_CPU" -v c0="$BENCH_CPU0" -v w="$(bench_now)" \
		-v w0="$BENCH_WALL0" -v l="$(bench_load)" 'BEGIN {
		printf "%s: %.2f s CPU (user+sys of the children), %.2f s wall; load average at end %s\n",
			n, c - c0, w - w0, l }'
}
