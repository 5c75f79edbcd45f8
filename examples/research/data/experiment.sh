#!/bin/sh
# experiment.sh: a k-nearest-neighbour fault classifier on data/machines.csv.
# Usage: sh experiment.sh K SCALE ATTEMPT, SCALE being "none" (raw
# features) or "standard" (z-scores from the training rows). Rows whose
# id is a multiple of 4 are the validation split. The metrics go to
# stdout and to results/attempt-ATTEMPT.json.
set -eu
k=${1:-3}
scale=${2:-none}
attempt=${3:-1}
case $k in '' | *[!0-9]* | 0) echo "k must be a positive integer, not $k" >&2; exit 2 ;; esac
case $attempt in '' | *[!0-9]*) echo "attempt must be a number, not $attempt" >&2; exit 2 ;; esac
case $scale in none | standard) ;; *) echo "scale must be none or standard, not $scale" >&2; exit 2 ;; esac
mkdir -p results
awk -F, -v k="$k" -v scale="$scale" -v attempt="$attempt" '
NR == 1 { next }
{
	n++; f[n, 1] = $2; f[n, 2] = $3; f[n, 3] = $4; y[n] = $5
	isval[n] = ($1 % 4 == 0)
}
END {
	for (j = 1; j <= 3; j++) { mu[j] = 0; sd[j] = 1 }
	if (scale == "standard") {
		for (j = 1; j <= 3; j++) {
			s = 0; m = 0
			for (i = 1; i <= n; i++) if (!isval[i]) { s += f[i, j]; m++ }
			mu[j] = s / m; s = 0
			for (i = 1; i <= n; i++) if (!isval[i]) s += (f[i, j] - mu[j]) ^ 2
			sd[j] = sqrt(s / m)
		}
	}
	for (i = 1; i <= n; i++) for (j = 1; j <= 3; j++) z[i, j] = (f[i, j] - mu[j]) / sd[j]
	ntrain = 0; nval = 0; correct = 0
	for (i = 1; i <= n; i++) if (!isval[i]) ntrain++
	for (i = 1; i <= n; i++) {
		if (!isval[i]) continue
		nval++; c = 0
		for (t = 1; t <= n; t++) {
			if (isval[t]) continue
			d = 0
			for (j = 1; j <= 3; j++) d += (z[i, j] - z[t, j]) ^ 2
			c++; dist[c] = d; lab[c] = y[t]
		}
		votes = 0
		for (m = 1; m <= k; m++) {
			b = m
			for (t = m + 1; t <= c; t++) if (dist[t] < dist[b]) b = t
			tmp = dist[m]; dist[m] = dist[b]; dist[b] = tmp
			tmp = lab[m]; lab[m] = lab[b]; lab[b] = tmp
			votes += lab[m]
		}
		if ((votes * 2 > k ? 1 : 0) == y[i]) correct++
	}
	acc = correct / nval
	printf "attempt=%d k=%d scale=%s\n", attempt, k, scale
	printf "train_rows=%d val_rows=%d\n", ntrain, nval
	printf "feature_std vibration_mm_s=%.2f temperature_c=%.2f rpm=%.2f\n", sdraw(1), sdraw(2), sdraw(3)
	printf "val_accuracy=%.4f\n", acc
	printf "{\"attempt\": %d, \"k\": %d, \"scale\": \"%s\", \"train_rows\": %d, \"val_rows\": %d, \"val_accuracy\": %.4f}\n", attempt, k, scale, ntrain, nval, acc > ("results/attempt-" attempt ".json")
}
function sdraw(j,   i, s, m, mean) {
	s = 0; m = 0
	for (i = 1; i <= n; i++) if (!isval[i]) { s += f[i, j]; m++ }
	mean = s / m; s = 0
	for (i = 1; i <= n; i++) if (!isval[i]) s += (f[i, j] - mean) ^ 2
	return sqrt(s / m)
}
' data/machines.csv
