# Shared by the experiment grids still run from scripts (posit-grid.sh's ablation):
# rows of `name|the paper's figure|lpgen train options`, one run per row in results/PREFIX-NAME/
# (a finished run is skipped, an interrupted one resumes from its checkpoint), and the table of
# their metrics. The caller sets LPGEN, NET (the options every row shares), EPOCHS and PREFIX.
# shellcheck shell=bash

run_row() {
  local row=$1 opts=$2 out=results/$PREFIX-$1
  if [[ -f $out/metrics.jsonl ]] && [[ $(wc -l <"$out/metrics.jsonl") -ge $EPOCHS ]]; then
    return 0
  fi
  local resume=""
  [[ -s $out/checkpoint.lpck ]] && resume="--resume"
  echo "== $row: lpgen train $NET $opts --out $out $resume" >&2
  # shellcheck disable=SC2086 # the options are words
  "$LPGEN" train $NET $opts --out "$out" $resume >/dev/null
}

# Rows on stdin; ROWS (names, space separated) selects some of them.
select_rows() {
  while IFS='|' read -r row paper opts; do
    [[ -z ${ROWS:-} || " $ROWS " == *" $row "* ]] && echo "$row|$paper|$opts"
  done
  return 0
}

# Rows on stdin, JOBS at a time.
run_rows() {
  export -f run_row
  export LPGEN NET EPOCHS PREFIX
  select_rows | while IFS='|' read -r row _ opts; do printf '%s\0' "$row|$opts"; done |
    xargs -0 -P "${JOBS:-1}" -I{} bash -c 'IFS="|" read -r r o <<<"$1"; run_row "$r" "$o"' _ {}
}

# Rows on stdin; the table of their runs: test accuracy by epoch (or the error, with ERROR=1),
# the last epoch's train loss, and the paper's figure (its header is PAPER).
print_table() {
  local measure="test accuracy"
  [[ -n ${ERROR:-} ]] && measure="test error"
  echo "| row | options | ${PAPER:-paper} | ours: $measure by epoch | train loss, last epoch |"
  echo "| --- | --- | ---: | --- | ---: |"
  select_rows | while IFS='|' read -r row paper opts; do
    local f=results/$PREFIX-$row/metrics.jsonl
    [[ -s $f ]] || continue
    python3 - "$row" "$paper" "$opts" "$f" "${ERROR:-}" <<'PY'
import json, sys
row, paper, opts, path, error = sys.argv[1:]
ms = [json.loads(l) for l in open(path) if l.strip()]
pct = lambda m: 100 * (1 - m["test_acc"]) if error else 100 * m["test_acc"]
figs = ", ".join(f"{pct(m):.2f}" for m in ms)
paper = f"{paper} %" if paper[:1].isdigit() else paper
print(f"| {row} | `{opts}` | {paper} | {figs} % | {ms[-1]['train_loss']:.3f} |")
PY
  done
}
