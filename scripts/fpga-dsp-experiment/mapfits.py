#!/usr/bin/env python3
"""After mapdsp.py: registers the read-out's `fits` test beside readout_rounded_q (both from
`rounded` in the same cycle, so fits_q equals the old fits of readout_rounded_q), taking the
26-bit test out of the path into the result register. An experiment."""
import sys
p = sys.argv[1]
s = open(p).read()
old = "    assign fits = ((&readout_rounded_q[40:15]) | ~(|readout_rounded_q[40:15]));\n"
assert old in s
s = s.replace(old, "    assign fits = fits_q;\n")
s = s.replace("    wire fits;\n", "    wire fits;\n    reg  fits_q;\n", 1)
old = "        readout_rounded_q <= rounded;\n"
assert old in s
s = s.replace(old, old + "        fits_q <= ((&rounded[40:15]) | ~(|rounded[40:15]));\n")
open(p, "w").write(s)
