//! The SGD training driver (SPEC.md §6). Not yet implemented: it arrives with the training
//! issue; the crate exists so the dependency graph of SPEC.md §2 is fixed from the start.
