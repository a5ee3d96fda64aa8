//! 1-bit quantization on the `quant1` unit (`Machine::quantize_1bit` of fix words and posit
//! words summed in quires): every column of a matrix through the unit in one stream.

use lpgen_golden::onebit::{self, Quantized};
use lpgen_golden::Format;
use lpgen_hdl::{Params, Unit};
use lpgen_verif::layout::{get_bits, put_bits};

use super::{Device, Rtl};
use crate::TrainError;

impl Rtl {
    /// How many `quant1` designs this machine has built (one per format and column bound).
    pub fn quant1_designs(&self) -> usize {
        self.quantizers.len()
    }

    /// The `quant1` unit of `f` for columns of up to `rows` words (a power of two, so that
    /// few designs serve every layer).
    fn quant1(&mut self, f: Format, rows: usize) -> Result<(&mut Device, u32), TrainError> {
        let longest = rows.max(1).next_power_of_two() as u32;
        let mut p = Params::new(Unit::Quant1, f);
        p.rows = longest;
        let gap = lpgen_hdl::units::quant1_gap(&p);
        let key = (f, longest);
        if !self.quantizers.contains_key(&key) {
            let d = Device::build(&self.tc, &p)?;
            self.quantizers.insert(key, d);
        }
        Ok((self.quantizers.get_mut(&key).expect("inserted"), gap))
    }

    /// Every column of the row-major rows × cols matrix `g` through the `quant1` unit, back to
    /// back in one stream: pass 1 (each word's bit), the wait for the dividers, and with
    /// error feedback pass 2 (each word's new residual); the means are read as pass 2 starts
    /// (or after the wait).
    pub(super) fn quant1_run(
        &mut self,
        f: Format,
        g: &[u64],
        (rows, cols): (usize, usize),
        mut residual: Option<&mut [u64]>,
    ) -> Result<Quantized, TrainError> {
        let w = f.width();
        let (dev, gap) = self.quant1(f, rows)?;
        let (is, os, lat) = (dev.layout.in_slots, dev.layout.out_slots, dev.latency);
        let [valid, replay, first, last, pg, pr] =
            ["in_valid", "replay", "first", "last", "g", "r"].map(|n| dev.pos(n));
        let [onebit, r_out, neg, pos] = ["onebit", "r_out", "neg", "pos"].map(|n| dev.pos(n));
        let passes = if residual.is_some() { 2 } else { 1 };
        // Cycles of one column: pass 1, gap − 1 idle cycles, pass 2 (or one more for the means).
        let per_column = rows + gap as usize - 1 + if passes == 2 { rows } else { 1 };
        let cycles = cols * per_column;
        let mut ins = vec![0u64; cycles * is];
        for col in 0..cols {
            let base = col * per_column;
            for pass in 0..passes {
                let start = base + pass * (rows + gap as usize - 1);
                for row in 0..rows {
                    let slot = &mut ins[(start + row) * is..][..is];
                    put_bits(slot, valid, 1, 1);
                    put_bits(slot, replay, 1, pass as u64);
                    put_bits(slot, first, 1, (pass == 0 && row == 0) as u64);
                    put_bits(slot, last, 1, (pass == 0 && row + 1 == rows) as u64);
                    put_bits(slot, pg, w, g[row * cols + col]);
                    let r = residual.as_deref().map_or(0, |r| r[row * cols + col]);
                    put_bits(slot, pr, w, r);
                }
            }
        }
        let outs = dev.stream(ins, cycles);
        let out = |cycle: usize, port: usize, width: u32| {
            get_bits(&outs[(cycle + lat) * os..][..os], port, width)
        };
        let words = onebit::words_per_column(rows);
        let mut q = Quantized {
            rows,
            cols,
            bits: vec![0; cols * words],
            recon: Vec::with_capacity(cols),
        };
        for col in 0..cols {
            let base = col * per_column;
            for row in 0..rows {
                if out(base + row, onebit, 1) == 1 {
                    q.bits[col * words + row / 32] |= 1 << (row % 32);
                }
            }
            let after = base + rows + gap as usize - 1;
            q.recon.push(onebit::Recon {
                neg: out(after, neg, w),
                pos: out(after, pos, w),
            });
            if let Some(r) = residual.as_deref_mut() {
                for row in 0..rows {
                    r[row * cols + col] = out(after + row, r_out, w);
                }
            }
        }
        Ok(q)
    }
}
