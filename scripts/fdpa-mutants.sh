#!/bin/bash
# The mutants of issue 49 on the golden fdpa (sw/golden/src/float/fdpa.rs): each applied,
# the fdpa_reference test run, the file restored. Run from the worktree root.
# mutant NAME PERL-EXPR: apply to fdpa.rs, run the test, report, restore
cd "$(git rev-parse --show-toplevel)"
f=sw/golden/src/float/fdpa.rs
run() {
  perl -0pi -e "$2" $f
  if git diff --quiet $f; then echo "$1: MUTATION NOT APPLIED"; return; fi
  out=$(CARGO_BUILD_JOBS=1 cargo test -q -p lpgen-golden --test fdpa_reference 2>&1)
  failed=$(echo "$out" | awk '/^failures:$/{f++} f==2 && /^    [a-z]/{print $1}' | tr "\n" " ")
  echo "$1: failing tests: ${failed:-NONE (survived)}"
  git checkout -q $f
}
run "F+1" 's/let f = i64::from\(self.chunk.f\);/let f = i64::from(self.chunk.f) + 1;/'
run "F-1" 's/let f = i64::from\(self.chunk.f\);/let f = i64::from(self.chunk.f) - 1;/'
run "trunc rounds half up" 's/        sig >> -s\n/        (sig + (1u128 << (-s - 1))) >> -s\n/'
run "e_zero f32 -126" 's/=> -133,/=> -126,/'
run "e_zero f32 -140" 's/=> -133,/=> -140,/'
run "e_zero f16 -24" 's/Rho::RneF16 => -21,/Rho::RneF16 => -24,/'
run "promote N+1" 's/a.chunks\(n as usize\).zip\(b.chunks\(n as usize\)\)/a.chunks(n as usize + 1).zip(b.chunks(n as usize + 1))/'
run "promote N-1" 's/a.chunks\(n as usize\).zip\(b.chunks\(n as usize\)\)/a.chunks(n as usize - 1).zip(b.chunks(n as usize - 1))/'
run "L+1" 's/let l = self.chunk.l as usize;/let l = self.chunk.l as usize + 1;/'
