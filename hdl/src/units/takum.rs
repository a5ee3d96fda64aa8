//! Takum hardware: the decoder's fields and the encoder of `takum:N` (golden `takum`), on the
//! posit datapath ([`TaperedHw`]): the lanes' adder, multiplier, divider, order and
//! conversions (and `HwFamily`) are the posit ones, written once over the family's codec.
//!
//! A positive word is `0 D R2 R1 R0 C M` with r = D ? R : 7 − R bits of C (past the word's
//! end, zeros) and c = D ? 2^r − 1 + C : 1 − 2^(r+1) + C, value (1 + M/2^p)·2^c.

use lpgen_golden::{Format, TakumFormat};

use super::posit::decode::{lzc, Decoded, Magnitude};
use super::posit::encode::kept_fraction;
use super::posit::{QuirePe, TaperedHw};
use crate::ir::{cat, konst, mux, signed_konst, Module, E};
use crate::units::{Params, PeKind, Unit};

/// The `takum-quire` array PE: the posit quire PE's datapath on takum words, with the golden
/// takum quire's size (`Tapered::quire_bits`: 1052 + 2N bits, a carry guard of 31).
pub(crate) static QUIRE_PE: QuirePe<TakumFormat> = QuirePe::new();

/// Bits of a decoded characteristic: −255 ..= 254.
const SCALE_BITS: u32 = 9;

impl TaperedHw for TakumFormat {
    const FAMILY: &'static str = "takum";
    const GOLDEN: &'static str = "TakumFormat";
    fn of(f: Format) -> Option<Self> {
        if let Format::Takum(t) = f {
            Some(t)
        } else {
            None
        }
    }
    /// N − 5: the fraction of a word whose characteristic has no bits (c = 0 or −1).
    fn frac_bits(self) -> u32 {
        self.n - 5
    }
    fn scale_bound(self) -> i64 {
        255
    }

    fn fields(self, m: &mut Module, name: &str, mg: &Magnitude) -> Decoded {
        let n = self.n;
        let w = |s: &str| format!("{name}_{s}");
        // The n − 1 bits after the sign: D, R, then C and M.
        let x = mg.mag.low(n - 1);
        let d = m.wire(&w("direction"), &x.bit(n - 2));
        // r = R for D = 1, 7 − R = ~R for D = 0.
        let r = m.wire(&w("c_bits"), &x.bits(n - 3, n - 5).xor(&d.not().sext(3)));
        // C and M, with 7 zeros after them: C may run past the word's end.
        let rest = m.wire(&w("after_regime"), &cat(&[x.low(n - 5), konst(7, 0)]));
        let rw = rest.width;
        let c_field = rest.bits(rw - 1, rw - 7).shr(&r.not());
        let frac = rest.shl(&r).bits(rw - 1, 7);
        // 2^r − 1 (D = 1) or 1 − 2^(r+1) (D = 0), in 10 bits, plus C.
        let pow = m.wire(&w("c_pow"), &konst(10, 1).shl(&r));
        let base = mux(
            &d,
            &pow.sub(&konst(10, 1)),
            &konst(10, 1).sub(&pow.add(&pow)),
        );
        let scale = m.wire(&w("scale"), &base.add(&c_field.zext(10)).low(SCALE_BITS));
        let sig = m.wire(&w("sig"), &cat(&[konst(1, 1), frac]));
        Decoded {
            sign: mg.sign.clone(),
            mag: mg.mag.clone(),
            zero: mg.zero.clone(),
            nar: mg.nar.clone(),
            scale,
            sig,
        }
    }

    /// Golden `TakumFormat::encode`: the characteristic's fields from the scale (r by a
    /// leading-zero count of its run v = c + 1 or −c), the string {D, R, C, fraction} cut to
    /// N − 1 bits, rounded to nearest even, saturated at ±minpos and ±maxpos.
    fn encode_body(
        self,
        m: &mut Module,
        neg: &E,
        scale: &E,
        sig: &E,
        sticky: &E,
        stage: bool,
    ) -> E {
        let n = self.n;
        m.comment("characteristic c from the scale; beyond maxpos or below minpos");
        let sw = scale.width.max(SCALE_BITS + 1);
        let sc = scale.sext(sw);
        let ovf = m.wire("maxpos", &sc.sgt(&signed_konst(sw, 254)));
        let unf = m.wire("below_minpos", &sc.slt(&signed_konst(sw, -255)));
        let c = sc.low(SCALE_BITS);
        let d = m.wire("direction", &c.msb().not());
        // v = c + 1 (c ≥ 0) or −c (c < 0) lies in 1..=255; r = ⌊log2 v⌋ = 7 − (leading zeros).
        let one = konst(SCALE_BITS, 1);
        let v = mux(&d, &c.add(&one), &konst(SCALE_BITS, 0).sub(&c)).low(8);
        let v = m.wire("c_run", &v);
        let (lz, _) = lzc(m, "c_run", &v);
        let reg = m.wire("regime", &mux(&d, &lz.not(), &lz));
        // C is v's r bits below its leading one (D = 1), or their complement (D = 0).
        let q = m.wire("c_field", &v.xor(&d.not().sext(8)));
        m.comment("fraction: keep FW + 1 bits (every kept bit and the guard); the rest is sticky");
        let (fk, lost) = kept_fraction(self.frac_bits() + 1, sig);
        let st_in = m.wire("sticky_in", &sticky.or(&lost));
        m.comment("the bit string after the sign: D, R, then C and the fraction moved up by 7 − r");
        let y = cat(&[q.low(7), fk]).shl(&lz);
        let body = m.wire("body", &cat(&[d, reg, y]));
        let vw = body.width;
        if stage {
            m.stage();
        }
        let u = m.wire("kept", &body.bits(vw - 1, vw - n + 1));
        let guard = body.bit(vw - n);
        let st = body.bits(vw - n - 1, 0).any().or(&st_in);
        m.comment(
            "round to nearest even, never to 0 or past maxpos; negate in the same carry chain",
        );
        let up = m.wire("round_up", &guard.and(&st.or(&u.bit(0))));
        let maxpos = (1u128 << (n - 1)) - 1;
        // Out of range, `kept` is garbage: the range tests decide alone.
        let in_range = ovf.or(&unf).not();
        let top = m.wire("saturate_high", &ovf.or(&in_range.and(&u.eq_k(maxpos))));
        let bottom = m.wire("saturate_low", &unf.or(&in_range.and(&u.any().not())));
        let ones = konst(n - 1, maxpos);
        let base = mux(&top, &ones, &mux(&bottom, &konst(n - 1, 1), &u));
        let base = m.wire("base", &cat(&[konst(1, 0), base]));
        let inc = m.wire("inc", &up.and(&top.or(&bottom).not()));
        base.xor(&neg.sext(n)).add(&neg.xor(&inc).zext(n))
    }
}

/// The takum arrays of the lint grid. Lean: takum:8 1×1 at stages 8 (every register
/// around the quire). Full: takum:8 and takum:16 1×1 at 0..=8, takum:16 2×3 at 0 and 2.
pub(crate) fn array_grid(full: bool) -> Vec<Params> {
    let cases: Vec<(&str, u32, u32, &[u32])> = if full {
        vec![
            ("takum:8", 1, 1, &[0, 1, 2, 3, 4, 5, 6, 7, 8]),
            ("takum:16", 1, 1, &[0, 1, 2, 3, 4, 5, 6, 7, 8]),
            ("takum:16", 2, 3, &[0, 2]),
        ]
    } else {
        vec![("takum:8", 1, 1, &[8])]
    };
    let pe: PeKind = "takum-quire"
        .parse()
        .expect("registered in golden takum::FAMILY");
    let mut g = vec![];
    for (f, r, c, stages) in cases {
        for &s in stages {
            let mut p = Params::new(Unit::Array, f.parse().expect("a takum format")).stages(s);
            (p.rows, p.cols, p.pe) = (r, c, pe);
            g.push(p);
        }
    }
    g
}
