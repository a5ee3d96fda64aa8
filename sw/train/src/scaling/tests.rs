use super::*;
use crate::machine::Golden;
use crate::model::Model;
use crate::net::tests::cfg;
use rand::{Rng, SeedableRng};

/// The FP8 recipe's stages on the 4-3-2 test MLP, products scaled by `scaling`.
fn fp8_cfg(scaling: &str) -> crate::config::Config {
    let mut c = cfg("bf16");
    let (stages, _) =
        crate::config::parse_precision("O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2").unwrap();
    c.stages = stages;
    c.quire = false;
    c.kahan = Default::default();
    c.scaling = Scaling::parse(scaling).unwrap();
    c
}

/// A per-tensor recipe's rule.
fn tensor_rule(r: Option<Recipe>) -> Rule {
    match r {
        Some(Recipe::Tensor { rule, .. }) => rule,
        r => panic!("{r:?} is not a per-tensor recipe"),
    }
}

/// TransformerEngine's delayed scaling kept by hand: the history of the last `h` amaxes (the
/// current tensor's not among them when it is quantized), the decode scale
/// f32(max · 2^margin / elem_max), unchanged while the history holds only zeros, 1 at the
/// start. elem_max / 7 is a power of two for E4M3 (448) and E5M2 (57344), so max / elem_max
/// never lies on an f32 tie and the f64 quotient rounds to f32 as the exact one does.
struct HandHistory {
    h: usize,
    margin: i32,
    elem_max: f64,
    amaxes: Vec<f64>,
    scale: f32,
}

impl HandHistory {
    fn scale_then_record(&mut self, x: &[f64]) -> f32 {
        let used = self.scale;
        self.amaxes.push(x.iter().fold(0f64, |m, v| m.max(v.abs())));
        if self.amaxes.len() > self.h {
            self.amaxes.remove(0);
        }
        let m = self.amaxes.iter().cloned().fold(0f64, f64::max);
        if m > 0.0 {
            self.scale = (m * 2f64.powi(self.margin) / self.elem_max) as f32;
        }
        used
    }
}

/// Issue 50's "delayed scaling equals a reference that keeps the amax history by hand": the
/// operands of one scaled product over 12 training steps (amaxes spread over 2^±6, a step of
/// zeros, a spike that leaves the history after H steps), with H = 3 and margins 0 and 1,
/// in E4M3 (F) and E5M2 (G): every step's scale code is the hand-kept one, every element
/// is the saturating format's rounding of x / S, and evaluation passes use the scale and
/// record nothing.
#[test]
fn delayed_scales_equal_a_hand_kept_amax_history() {
    for (margin, place) in [(0, Place::Forward), (1, Place::Gradient)] {
        let c = fp8_cfg(&format!("all=delayed:3:{margin}"));
        let stage = match place {
            Place::Forward => c.stages.f,
            _ => c.stages.g,
        };
        let sat = ScaledFormat::per_tensor(stage).unwrap();
        let mut g = Golden::default();
        let mut scales = Scales::default();
        let mut net = Net {
            m: &mut g,
            cfg: &c,
            storage: None,
            stream: None,
            scales: Some(&mut scales),
        };
        let mut hand = HandHistory {
            h: 3,
            margin,
            elem_max: sat.elem_max(),
            amaxes: vec![],
            scale: 1.0,
        };
        let mut rng = rand_pcg::Pcg64::seed_from_u64(50);
        let bf16: lpgen_golden::Format = "bf16".parse().unwrap();
        for step in 0..12 {
            let mag = match step {
                4 => 0.0,
                5 => 1e4,
                _ => 2f64.powi(rng.gen_range(-6..=6)),
            };
            let x: Vec<f64> = (0..12)
                .map(|_| {
                    bf16.calc()
                        .to_f64(bf16.calc().from_f64(mag * rng.gen_range(-1.0..1.0)))
                })
                .collect();
            let words: Vec<u64> = x.iter().map(|&v| bf16.calc().from_f64(v)).collect();
            let m = Mat {
                rows: 3,
                cols: 4,
                data: words,
            };
            // An evaluation pass first: the scale as it stands, nothing recorded.
            let before = net.scales.as_deref().unwrap().save();
            let q_eval = net
                .quantize_operand(
                    (place, 0, 1),
                    tensor_rule(c.scaling.get(place)),
                    (&m, bf16),
                    false,
                )
                .unwrap();
            assert_eq!(net.scales.as_deref().unwrap().save(), before, "step {step}");
            let q = net
                .quantize_operand(
                    (place, 0, 1),
                    tensor_rule(c.scaling.get(place)),
                    (&m, bf16),
                    true,
                )
                .unwrap();
            assert_eq!(
                q_eval, q,
                "step {step}: evaluation and training quantize alike"
            );
            let want = hand.scale_then_record(&x);
            assert_eq!(
                q.scales,
                vec![u64::from(want.to_bits())],
                "margin {margin}, step {step}: scale {} against the hand-kept {want}",
                f32::from_bits(q.scales[0] as u32)
            );
            let elem = sat.elem_calc();
            for (i, &v) in x.iter().enumerate() {
                let r = elem.from_f64(v / f64::from(want));
                assert_eq!(q.codes[i], r, "step {step}: element {v} / {want}");
            }
        }
    }
}

/// Current scaling uses the tensor's own amax: S = f32(amax / elem_max) (margin 0), and a
/// tensor of zeros gets S = 0 and zero elements.
#[test]
fn current_scales_use_the_tensors_own_amax() {
    let c = fp8_cfg("F=current");
    let mut g = Golden::default();
    let mut net = Net::new(&mut g, &c);
    let bf16: lpgen_golden::Format = "bf16".parse().unwrap();
    for (vals, want) in [
        (vec![0.5, -3.0, 0.25, 1.0], (3.0f64 / 448.0) as f32),
        (vec![0.0; 4], 0.0),
    ] {
        let m = Mat {
            rows: 2,
            cols: 2,
            data: vals.iter().map(|&v| bf16.calc().from_f64(v)).collect(),
        };
        let q = net
            .quantize_operand((Place::Forward, 0, 0), Rule::Current, (&m, bf16), true)
            .unwrap();
        assert_eq!(q.scales, vec![u64::from(want.to_bits())], "{vals:?}");
    }
}

/// A scaled product on the machine: both operands quantized, multiplied in float:8:23 and
/// scaled back by S_a and S_b. Weights of 2^-10 and 2^-11, below E4M3's smallest subnormal
/// (2^-9), are lost unscaled; scaled they are E4M3's 448 and 224 and the product is right.
#[test]
fn a_scaled_product_scales_back() {
    let c = fp8_cfg("F=current");
    let mut g = Golden::default();
    let mut net = Net::new(&mut g, &c);
    let (bf16, e4m3) = (c.stages.o, c.stages.f);
    let mat = |f: lpgen_golden::Format, r: usize, k: usize, v: &[f64]| Mat {
        rows: r,
        cols: k,
        data: v.iter().map(|&x| f.calc().from_f64(x)).collect(),
    };
    let a = mat(e4m3, 1, 2, &[448.0, 224.0]);
    let b = mat(bf16, 2, 1, &[2f64.powi(-10), 2f64.powi(-11)]);
    let cm = net
        .scaled_product(
            (
                Place::Forward,
                0,
                Recipe::Tensor {
                    rule: Rule::Current,
                    element: None,
                },
            ),
            (a.view(), e4m3),
            (b.view(), bf16),
            true,
        )
        .unwrap();
    // 0.546875 = 1.00011b · 2^-1, E4M3's nearest 0.5625 (not a tie: S_b's f32 rounding
    // cannot move it).
    let want = 448.0 * 2f64.powi(-10) + 224.0 * 2f64.powi(-11);
    assert_eq!(cm.data, vec![e4m3.calc().from_f64(want)]);
    assert_eq!(e4m3.calc().to_f64(cm.data[0]), 0.5625);
    // Unscaled, both weights round to E4M3's zero.
    let bq: Vec<u64> = net.m.convert(bf16, e4m3, &b.data).unwrap();
    assert_eq!(bq, vec![0, 0]);
}

/// A step of the 4-3-2 MLP records one amax per scaled operand (three product stages, two
/// layers: F of both, G of both, B of the second), and evaluation records none.
#[test]
fn a_training_step_records_each_operand_once() {
    let c = fp8_cfg("all=delayed:5");
    let mut model = Model::init(&c);
    let mut g = Golden::default();
    let mut scales = Scales::default();
    let mut net = Net {
        m: &mut g,
        cfg: &c,
        storage: None,
        stream: None,
        scales: Some(&mut scales),
    };
    let f = c.stages.f;
    let x = Mat {
        rows: 2,
        cols: 4,
        data: [1.0, -1.0, 0.5, 0.0, -1.0, 1.0, 0.0, 0.5]
            .iter()
            .map(|&v| f.calc().from_f64(v))
            .collect(),
    };
    let mut noise = c.stream(&[0]);
    for _ in 0..2 {
        net.step(&mut model, x.clone(), &[0, 1], 0.5, 0.5, &mut noise)
            .unwrap();
    }
    net.forward(&model, x.clone()).unwrap();
    let s = net.scales.as_deref().unwrap();
    let keys: Vec<Key> = s.delayed.keys().cloned().collect();
    assert_eq!(
        keys,
        vec![
            (0, 'F', 0),
            (0, 'F', 1),
            (0, 'G', 0),
            (0, 'G', 1),
            (1, 'B', 0),
            (1, 'B', 1),
            (1, 'F', 0),
            (1, 'F', 1),
            (1, 'G', 0),
            (1, 'G', 1)
        ]
    );
    assert!(s.delayed.values().all(|d| d.history().count() == 2));
    // The checkpoint line reads back as itself.
    let line = s.save();
    let back = Scales::restore(&line, &c.scaling, &c.stages).unwrap();
    assert_eq!(back.save(), line);
}

/// `--scaling`'s parser: stage letters, all, none, the golden rule's syntax; refusals in one
/// line naming the problem.
#[test]
fn scaling_strings_parse_and_bad_ones_are_refused_in_one_line() {
    let s = Scaling::parse("F=delayed,BG=delayed:16:1").unwrap();
    assert_eq!(
        s.f,
        Some(Recipe::Tensor {
            rule: Rule::Delayed {
                history: 1024,
                margin: 0
            },
            element: None
        })
    );
    assert_eq!(
        s.g,
        Some(Recipe::Tensor {
            rule: Rule::Delayed {
                history: 16,
                margin: 1
            },
            element: None
        })
    );
    assert_eq!(
        Scaling::parse("all=current").unwrap().b,
        Some(Recipe::Tensor {
            rule: Rule::Current,
            element: None,
        })
    );
    assert!(Scaling::parse("none").unwrap().is_none());
    // MXFP8 (E5M2 backward on the block product's integer path) and +sr, either order.
    let s =
        Scaling::parse("F=scaled/fp8:e4m3/b32/e8m0,B=scaled/fp8:e5m2/b32/e8m0,G=nvfp4+sr+rht16")
            .unwrap();
    assert_eq!(s.b.unwrap().to_string(), "scaled/fp8:e5m2/b32/e8m0");
    let g = s.g.unwrap();
    assert!(
        g.sr() && g.rht() && g.to_string() == "nvfp4+rht16+sr",
        "{g}"
    );
    assert_eq!(Scaling::parse("G=nvfp4+rht16+sr").unwrap().g, Some(g));
    assert!(!Scaling::parse("G=nvfp4+rht16").unwrap().g.unwrap().sr());
    for (bad, why) in [
        ("F=delayed:0", "history of 0"),
        ("F=bogus", "unknown rule"),
        ("X=current", "unknown stage 'X'"),
        ("O=current", "no matrix products"),
        ("F=current,F=delayed", "given twice"),
        ("Fcurrent", "has no '='"),
        ("=current", "names no stage"),
        ("F=nvfp4+rht16", "not stage 'F''s"),
        ("G=current+rht16", "goes with a block recipe"),
        ("G=nvfp4+rht8", "the options are +rht16"),
        ("B=nvfp4+sr", "not stage 'B''s"),
        ("G=delayed+sr", "+sr goes with a block recipe"),
        ("G=nvfp4+sr+rht16+sr", "+sr given twice"),
        ("G=nvfp4+", "option \"\""),
        (
            "all=scaled/fp4:e2m1/b16/f32",
            "a block scale has at most 16 bits",
        ),
        (
            "all=scaled/bf16/b32/e8m0",
            "more than the block product's i128 holds",
        ),
        ("all=scaled/fp4:e2m1/b0/e8m0", "K >= 1"),
    ] {
        let e = Scaling::parse(bad).unwrap_err().0;
        assert!(e.contains(why) && !e.contains('\n'), "{bad}: {e}");
    }
}

/// TransformerEngine's FP8 GEMM on Hopper, per tensor, in a bf16 stage
/// (`F=current/fp8:e4m3` with `--accumulate matmul=fdpa:hopper`): both operands quantized
/// into E4M3 with their own scales, the E4M3 words multiplied by the matrix unit's chunks
/// (the golden `FdpaPlan::dot`, binary32 words), scaled back by S_a and then S_b in binary32
/// and rounded into bf16 — written here with `half` and f32 arithmetic. K = 70 spans three
/// chunks of 32, and magnitudes over 2^12 make the 13-bit truncation show.
#[test]
fn a_scaled_product_on_a_matrix_unit_is_the_gpu_gemm() {
    scaled_product_sums("bf16", "matmul=fdpa:hopper", |x| {
        half::bf16::from_f32(x).to_bits() as u64
    });
}

/// The same product with `--accumulate matmul=exact`: the E4M3 products summed exactly and
/// rounded once to binary32 (binary32 has no accumulator: the float family's `float:8:23`
/// sums them), then scaled back as above. The reference sums in f64, exactly here (E4M3
/// products span under 2^36 and K = 70). The stage is binary32 as a float format, so that
/// a sum rounded along the way shows in the words (bf16 would hide it).
#[test]
fn an_exactly_summed_scaled_product_rounds_once_to_binary32() {
    scaled_product_sums("float:8:23", "matmul=exact", |x| x.to_bits() as u64);
}

/// A per-tensor scaled E4M3 product in a `stage` of the float family summed by
/// `accumulate` (`fdpa:hopper` or `exact`), against the reference written from their
/// definitions; `word`: the stage's word of the product's binary32 value.
fn scaled_product_sums(stage: &str, accumulate: &str, word: fn(f32) -> u64) {
    let mut c = cfg(stage);
    c.quire = false;
    c.kahan = Default::default();
    c.scaling = Scaling::parse("F=current/fp8:e4m3").unwrap();
    c.accumulate = crate::config::AccumulatePlaces::parse(accumulate).unwrap();
    let mut g = Golden::default();
    let mut net = Net::new(&mut g, &c);
    let stage = c.stages.f;
    let e4m3: lpgen_golden::Format = "fp8:e4m3".parse().unwrap();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(0x49_50);
    let (m, k, n) = (8, 70, 6);
    let mut mat = |r: usize, cols: usize, spread: i32| Mat {
        rows: r,
        cols,
        data: (0..r * cols)
            .map(|_| {
                let v = rng.gen_range(-1.0..1.0) * 2f64.powi(rng.gen_range(-spread..=spread));
                stage.calc().from_f64(v)
            })
            .collect(),
    };
    let (a, b) = (mat(m, k, 8), mat(k, n, 8));
    let recipe = c.scaling.f.unwrap();
    let got = net
        .scaled_product(
            (Place::Forward, 0, recipe),
            (a.view(), stage),
            (b.view(), stage),
            true,
        )
        .unwrap();
    // The reference: the golden quantization and chunks, the rest in f32 and `half`.
    let sf = lpgen_golden::scale::ScaledFormat::per_tensor(e4m3).unwrap();
    let quantize = |x: &Mat<u64>| {
        let v: Vec<f64> = x.data.iter().map(|&w| stage.calc().to_f64(w)).collect();
        let q = sf.quantize(&v, x.rows, x.cols, None).unwrap();
        (q.codes, sf.scale.value(q.scales[0]) as f32)
    };
    let ((qa, sa), (qb, sb)) = (quantize(&a), quantize(&b));
    let lpgen_golden::Format::Float(f) = e4m3 else {
        unreachable!()
    };
    let plan = lpgen_golden::float::fdpa::Fdpa::parse("fdpa:hopper")
        .unwrap()
        .plan(&f)
        .unwrap();
    let mut truncated = false;
    for i in 0..m {
        for j in 0..n {
            let row: Vec<u64> = qa[i * k..(i + 1) * k].to_vec();
            let col: Vec<u64> = (0..k).map(|t| qb[t * n + j]).collect();
            let exact: f64 = (0..k)
                .map(|t| e4m3.calc().to_f64(row[t]) * e4m3.calc().to_f64(col[t]))
                .sum();
            let d = match accumulate {
                "matmul=exact" => exact as f32,
                _ => f32::from_bits(plan.dot(&row, &col, 0) as u32),
            };
            truncated |= f64::from(d) != exact;
            let want = word(d * sa * sb);
            assert_eq!(got.data[i * n + j], want, "element ({i}, {j})");
        }
    }
    // The chunks' truncation shows; the exact sum is not binary32 on some element either.
    assert!(truncated, "{accumulate}: some sum lost bits");
}

/// A per-tensor rule may name the format its operands are quantized into (`/ELEM`); one of
/// another family than the stage's, or not a format, is refused in one line.
#[test]
fn a_per_tensor_rule_names_its_operands_format() {
    let s = Scaling::parse("F=delayed/fp8:e4m3,BG=current/fp8:e5m2").unwrap();
    let e4m3: lpgen_golden::Format = "fp8:e4m3".parse().unwrap();
    let bf16: lpgen_golden::Format = "bf16".parse().unwrap();
    assert_eq!(s.f.unwrap().element(bf16), e4m3);
    assert_eq!(
        s.describe(),
        "F=delayed:1024:0/fp8:e4m3 B=current/fp8:e5m2 G=current/fp8:e5m2"
    );
    let stages = cfg("bf16").stages;
    s.check(&stages).unwrap();
    let other = Scaling::parse("F=delayed/posit:8:2")
        .unwrap()
        .check(&stages);
    let why = other.unwrap_err().0;
    assert!(
        why.contains("another family") && !why.contains('\n'),
        "{why}"
    );
    let bad = Scaling::parse("F=current/fp9").unwrap_err().0;
    assert!(bad.contains("fp9") && !bad.contains('\n'), "{bad}");
}
