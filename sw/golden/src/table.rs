//! Exact table-driven fast paths for formats of at most 8 bits: every rounded sum and product
//! of two words is looked up instead of decoded, computed and encoded. A family builds its
//! tables from its own golden operations (so they cannot disagree with them: one source of
//! truth), once per format per process, and keeps them here; the families' tests compare the
//! fast paths with the operations on every pair of words.

use std::any::{Any, TypeId};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::family::Format;

/// Formats up to this width have tables: 2^16 entries per operation.
pub const MAX_TABLE_BITS: u32 = 8;

/// The rounded sum and product of every pair of words of an `n`-bit format, at `a << 8 | b`
/// whatever n (2^16 entries each, so that an index of two words needs no bounds check).
pub(crate) struct OpTables {
    pub add: Box<[u8; 1 << 16]>,
    pub mul: Box<[u8; 1 << 16]>,
}

impl OpTables {
    /// The tables of an `n`-bit format (n ≤ [`MAX_TABLE_BITS`]) from its operations.
    pub fn build(n: u32, add: impl Fn(u64, u64) -> u64, mul: impl Fn(u64, u64) -> u64) -> Self {
        assert!(n <= MAX_TABLE_BITS, "{n}-bit words have no tables");
        let table = |op: &dyn Fn(u64, u64) -> u64| {
            let mut t = Box::new([0u8; 1 << 16]);
            for a in 0..1u64 << n {
                for b in 0..1u64 << n {
                    t[Self::at(a, b)] = op(a, b) as u8;
                }
            }
            t
        };
        OpTables {
            add: table(&add),
            mul: table(&mul),
        }
    }

    /// The entry of words a and b (each below 2^8).
    #[inline(always)]
    pub fn at(a: u64, b: u64) -> usize {
        ((a << 8 | b) & 0xffff) as usize
    }

    /// a + b rounded.
    #[inline]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        self.add[Self::at(a, b)] as u64
    }

    /// a · b rounded.
    #[inline]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.mul[Self::at(a, b)] as u64
    }

    /// Σ a_k·b_k with a rounding after every product and every addition, from the word
    /// `zero`, in order (`sum::naive_dot`).
    pub fn naive_dot(&self, zero: u64, a: &[u64], b: &[u64]) -> u64 {
        a.iter()
            .zip(b)
            .fold(zero, |s, (&x, &y)| self.add(s, self.mul(x, y)))
    }
}

mod lanes;
pub(crate) use lanes::Zeros;

/// The tables of `key`, built by `build` on first use and kept for the process (a few formats
/// of at most 2^[`MAX_TABLE_BITS`] words each), so that a reference costs no reference count:
/// a dot product per output element, on several threads, would otherwise contend on one
/// shared counter. A format keeps one table of each type `T` (the family's, the kernels').
pub(crate) fn cached<T: Any + Send + Sync>(
    format: impl Into<Format>,
    build: impl FnOnce() -> T,
) -> &'static T {
    let format = format.into();
    cached_pair(format, format, build)
}

/// [`cached`] for a table of two formats (a conversion's, from one to the other).
pub(crate) fn cached_pair<T: Any + Send + Sync>(
    from: Format,
    to: Format,
    build: impl FnOnce() -> T,
) -> &'static T {
    type Entry = &'static (dyn Any + Send + Sync);
    type Key = (Format, Format, TypeId);
    let key = (from, to, TypeId::of::<T>());
    // Each thread remembers the last format it asked for (an operation per word would
    // otherwise take the shared lock every time).
    thread_local! {
        static LAST: Cell<Option<(Key, Entry)>> = const { Cell::new(None) };
    }
    static CACHE: OnceLock<Mutex<HashMap<Key, Entry>>> = OnceLock::new();
    let entry = LAST.with(|last| {
        if let Some((k, t)) = last.get() {
            if k == key {
                return t;
            }
        }
        let cache = || {
            CACHE
                .get_or_init(Default::default)
                .lock()
                .unwrap_or_else(|e| e.into_inner())
        };
        let found = cache().get(&key).copied();
        // Built without the lock held: a table may be built from other tables (the lane
        // tables from the family's). Two threads may both build one; the first kept wins.
        let t: Entry = match found {
            Some(t) => t,
            None => {
                let built: Entry = Box::leak(Box::new(build()));
                *cache().entry(key).or_insert(built)
            }
        };
        last.set(Some((key, t)));
        t
    });
    entry
        .downcast_ref()
        .expect("the entry was made for this type")
}
