//! Corner cases written out, each with the word the text gives, and checked against
//! the reference too.

use super::*;

/// `mode` on `format`: D for (a, b, C), asserted equal to `want` and to the reference.
fn expect(mode: &str, format: &str, spec: Spec, (a, b, c): (&[Bits], &[Bits], Bits), want: Bits) {
    let case = Case::new(mode, format, spec);
    let (got, out) = case.calc.fdpa(case.mode, a, b, c).unwrap();
    assert_eq!(
        got, want,
        "{mode} on {format}: a = {a:x?}, b = {b:x?}, C = {c:#x}: {got:#x}"
    );
    assert_eq!(out.width(), if spec.rho == Rho::RneF16 { 16 } else { 32 });
    case.check(a, b, c).unwrap();
}

const HOPPER_E4M3: Spec = Spec {
    l: 32,
    f: 13,
    rho: Rho::RzE8m13,
    promote: None,
    tf32: false,
};
const BLACKWELL_E4M3: Spec = Spec {
    f: 25,
    rho: Rho::RzF32,
    ..HOPPER_E4M3
};
const VOLTA_F16: Spec = Spec {
    l: 4,
    f: 23,
    rho: Rho::RzF32,
    promote: None,
    tf32: false,
};

// fp8:e4m3 words: 1.0 = 0x38, 1.5 = 0x3C, 2.0 = 0x40, −2.0 = 0xC0, −0 = 0x80.

#[test]
fn cancellation_and_negative_zero_give_positive_zero() {
    let hop = ("fdpa:hopper", "fp8:e4m3", HOPPER_E4M3);
    let x = |t: (&[Bits], &[Bits], Bits)| expect(hop.0, hop.1, hop.2, t, 0);
    x((&[0x3C, 0x3C], &[0x40, 0xC0], 0));
    x((&[0x3C, 0x3C], &[0x40, 0xC0], 0x8000_0000));
    x((&[0x80], &[0x38], 0x8000_0000));
    // −3 + 3 with C = −0, and 1.5·2 − 3 (C = −3.0 = 0xC0400000).
    x((&[0x3C], &[0x40], 0xC040_0000));
    // A negative C below the truncation: −2^−149 becomes +0 (not −0).
    x((&[0x38], &[0x80], 0x8000_0001));
}

#[test]
fn nan_and_infinities_propagate_as_in_ieee() {
    let (inf, ninf, one, mone, zero) = (0x7C00, 0xFC00, 0x3C00, 0xBC00, 0);
    let x = |t: (&[Bits], &[Bits], Bits), w: Bits| expect("fdpa:volta", "f16", VOLTA_F16, t, w);
    x((&[inf], &[zero], 0), 0x7FFF_FFFF); // ∞·0
    x((&[inf, inf], &[one, mone], 0), 0x7FFF_FFFF); // ∞ − ∞
    x((&[inf, one], &[one, one], 0), 0x7F80_0000);
    x((&[ninf], &[one], 0x3F80_0000), 0xFF80_0000);
    x((&[one], &[one], 0xFF80_0000), 0xFF80_0000); // C = −∞
    x((&[inf], &[one], 0xFF80_0000), 0x7FFF_FFFF); // ∞ + C = −∞
    x((&[one], &[one], 0x7FC0_0000), 0x7FFF_FFFF); // C NaN
    x((&[0x7E00], &[one], 0), 0x7FFF_FFFF); // NaN operand
                                            // fp8:e4m3's NaN (0x7F): the binary32 NaN word.
    expect(
        "fdpa:hopper",
        "fp8:e4m3",
        HOPPER_E4M3,
        (&[0x7F], &[0x38], 0),
        0x7FFF_FFFF,
    );
}

#[test]
fn ties_round_to_even_in_binary16() {
    let spec = Spec {
        l: 4,
        f: 30,
        rho: Rho::RneF16,
        promote: None,
        tf32: false,
    };
    let x = |t: (&[Bits], &[Bits], Bits), w: Bits| expect("fdpa:4:30:rne-f16", "f16", spec, t, w);
    // 1 + 2^−11: halfway between 1 and 1 + 2^−10, to 1.
    x((&[0x3C00, 0x2400], &[0x3C00, 0x2800], 0), 0x3C00);
    // (1 + 2^−10) + 2^−11: to 1 + 2^−9.
    x((&[0x3C01, 0x2400], &[0x3C00, 0x2800], 0), 0x3C02);
    // The same tie below zero, and a C term making one: −1 − 2^−11 to −1.
    x((&[0xBC00], &[0x3C00], 0x9000), 0xBC00);
    // A NaN result is 0x7FFF.
    x((&[0x7C00], &[0], 0), 0x7FFF);
}

#[test]
fn subnormals_are_terms_at_the_smallest_normal_exponent() {
    // C = 2^−149 (e = −126, s = 2^−23): F = 25 keeps it, F = 13 truncates it to 0.
    let zeros: (&[Bits], &[Bits]) = (&[0; 3], &[0; 3]);
    expect(
        "fdpa:blackwell",
        "fp8:e4m3",
        BLACKWELL_E4M3,
        (zeros.0, zeros.1, 1),
        1,
    );
    expect(
        "fdpa:hopper",
        "fp8:e4m3",
        HOPPER_E4M3,
        (zeros.0, zeros.1, 1),
        0,
    );
    // fp8:e4m3's smallest subnormal squared: 2^−18 exactly.
    expect(
        "fdpa:hopper",
        "fp8:e4m3",
        HOPPER_E4M3,
        (&[1], &[1], 0),
        0x3680_0000,
    );
    // A binary32 subnormal result: 2^−140 from bf16 operands 2^−70 (0x1C80).
    let ampere = Spec {
        l: 8,
        f: 24,
        ..VOLTA_F16
    };
    expect(
        "fdpa:ampere",
        "bf16",
        ampere,
        (&[0x1C80], &[0x1C80], 0),
        1 << 9,
    );
}

#[test]
fn a_zero_term_stands_at_e_zero() {
    // A zero C at −21 (binary16) is the largest exponent beside 1.75·2^−24 = 2^−12 ·
    // 1.75·2^−12 (f16 0x0C00, 0x0F00): F = 2 truncates the product to 0.
    let spec = Spec {
        l: 2,
        f: 2,
        rho: Rho::RneF16,
        promote: None,
        tf32: false,
    };
    expect(
        "fdpa:2:2:rne-f16",
        "f16",
        spec,
        (&[0x0C00], &[0x0F00], 0),
        0,
    );
    // The same at −133 (binary32) beside 1.75·2^−140 from bf16 (0x1C80, 0x1CE0), F = 3.
    let spec = Spec {
        l: 4,
        f: 3,
        rho: Rho::RzF32,
        ..spec
    };
    expect(
        "fdpa:4:3:rz-f32",
        "bf16",
        spec,
        (&[0x1C80], &[0x1CE0], 0),
        0,
    );
}

#[test]
fn truncation_is_below_the_chunks_largest_exponent() {
    // C = 2^24 and 32 products 1·1: each truncated to 0 below 2^(24 − 13) (fp8 on Hopper);
    // on Blackwell (F = 25) they count.
    let ones = [0x38; 32];
    expect(
        "fdpa:hopper",
        "fp8:e4m3",
        HOPPER_E4M3,
        (&ones, &ones, 0x4B80_0000),
        0x4B80_0000,
    );
    expect(
        "fdpa:blackwell",
        "fp8:e4m3",
        BLACKWELL_E4M3,
        (&ones, &ones, 0x4B80_0000),
        0x4B80_0010,
    );
    // rz-e8m13 keeps 13 fraction bits: 1 + 2^−13 + 2^−14 (C) to 1 + 2^−13.
    let c = 0x3F80_0000 | 1 << 10 | 1 << 9;
    expect(
        "fdpa:hopper",
        "fp8:e4m3",
        HOPPER_E4M3,
        (&[0], &[0], c),
        0x3F80_0400,
    );
}

#[test]
fn promotion_adds_chunked_groups_into_binary32() {
    let spec = Spec {
        promote: Some(128),
        ..HOPPER_E4M3
    };
    let ones = [0x38; 256];
    // Without promotion the ones vanish below 2^24; with it each group of 128 adds 128.
    let c = 0x4B80_0000;
    expect("fdpa:hopper", "fp8:e4m3", HOPPER_E4M3, (&ones, &ones, c), c);
    let x = |t: (&[Bits], &[Bits], Bits), w: Bits| {
        expect("fdpa:hopper:promote128", "fp8:e4m3", spec, t, w)
    };
    x((&ones, &ones, c), 0x4B80_0080);
    x((&ones[..200], &ones[..200], 0), 0x4348_0000); // 200
                                                     // K = 0 leaves C as it is, −0 included.
    x((&[], &[], 0x8000_0000), 0x8000_0000);
}

#[test]
fn ampere_reads_binary32_as_tf32_and_dot_rounds_into_the_format() {
    let spec = Spec {
        l: 4,
        f: 24,
        rho: Rho::RzF32,
        promote: None,
        tf32: true,
    };
    let x = 0x3F80_2001; // 1 + 2^−10 + 2^−23: read as 1 + 2^−10.
    expect(
        "fdpa:ampere",
        "float:8:23",
        spec,
        (&[x], &[0x3F80_0000], 0),
        0x3F80_2000,
    );
    // Calc::dot: the binary32 word rounded into the operand format (32 ones: 32.0 = 0x60).
    let c = "fp8:e4m3".parse::<Format>().unwrap().calc();
    let mode: SumMode = "fdpa:hopper".parse().unwrap();
    assert_eq!(c.dot(mode, &[0x38; 32], &[0x38; 32]).unwrap(), 0x60);
    assert_eq!(
        c.dots(mode, &[&[0x38; 3]], &[&[0x38; 3], &[0xB8; 3]])
            .unwrap(),
        [0x44, 0xC4]
    );
}

#[test]
fn bad_modes_and_formats_are_refused_in_one_line() {
    for bad in [
        "fdpa",
        "fdpa:nvidia",
        "fdpa:0:13:rz-f32",
        "fdpa:4:0:rz-f32",
        "fdpa:4:65:rz-f32",
        "fdpa:4:13:rn",
        "fdpa:4:13",
        "fdpa:hopper:promote0",
        "fdpa:hopper:promoteX",
        "fdpa:4:13:rz-f32:promote6",
        "fdpa:4:13:rne-f16:promote8",
    ] {
        let e = bad.parse::<SumMode>().unwrap_err().to_string();
        assert!(!e.contains('\n') && e.contains(bad), "{bad}: {e}");
    }
    let refuse = |mode: &str, format: &str, has: &str| {
        let SumMode::Fdpa(m) = mode.parse::<SumMode>().unwrap() else {
            unreachable!()
        };
        let c = format.parse::<Format>().unwrap().calc();
        let e = c.fdpa(m, &[], &[], 0).unwrap_err().to_string();
        assert!(
            !e.contains('\n') && e.contains(has),
            "{mode} on {format}: {e}"
        );
        let d = c.dot(SumMode::Fdpa(m), &[], &[]).unwrap_err().to_string();
        assert!(d.contains(has), "{mode} on {format}: {d}");
    };
    refuse("fdpa:ada", "float:8:10", "ada takes f16, bf16 or fp8");
    refuse("fdpa:volta", "bf16", "volta takes f16");
    refuse("fdpa:hopper", "float:3:2:nonan", "hopper takes");
    refuse("fdpa:blackwell:promote48", "fp8:e4m3", "not a multiple");
    for f in ["posit:16", "lns:5:6", "fix:7:8", "dfix:10", "f32"] {
        refuse("fdpa:hopper", f, "'fdpa' is for float formats");
    }
    // A sum is not a matrix unit's operation.
    let c = "bf16".parse::<Format>().unwrap().calc();
    assert!(c.sum("fdpa:hopper".parse().unwrap(), &[0]).is_err());
}
