//! FNV-1a with a 128-bit state: the cache key of a Verilator build and the integrity check
//! of a cached shared object. Not cryptographic: the cache is a local build cache, and the
//! digest only has to tell a complete entry from a corrupt or half-written one.

const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

/// An incremental FNV-1a-128 digest.
#[derive(Clone, Copy, Debug)]
pub struct Digest(u128);

impl Default for Digest {
    fn default() -> Self {
        Digest(OFFSET)
    }
}

impl Digest {
    pub fn new() -> Digest {
        Digest::default()
    }

    /// Adds `bytes`, then a separator that keeps ("ab", "c") apart from ("a", "bc").
    pub fn field(&mut self, bytes: &[u8]) -> &mut Digest {
        self.bytes(bytes);
        self.bytes(&(bytes.len() as u64).to_le_bytes());
        self
    }

    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Digest {
        let mut h = self.0;
        for &b in bytes {
            h ^= u128::from(b);
            h = h.wrapping_mul(PRIME);
        }
        self.0 = h;
        self
    }

    pub fn hex(&self) -> String {
        format!("{:032x}", self.0)
    }
}

/// The digest of a byte string, as 32 hex digits.
pub fn hex(bytes: &[u8]) -> String {
    Digest::new().bytes(bytes).hex()
}

#[cfg(test)]
mod tests {
    #[test]
    fn matches_the_published_fnv1a_128_vectors() {
        assert_eq!(super::hex(b""), "6c62272e07bb014262b821756295c58d");
        assert_eq!(super::hex(b"a"), "d228cb696f1a8caf78912b704e4a8964");
    }
}
