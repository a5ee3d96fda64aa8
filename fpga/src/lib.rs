//! FPGA flows (SPEC.md §7). Not yet implemented: it arrives with the FPGA issue.
