//! Generated modules a target implements with its own primitive, written by the flow in place
//! of the generated text (same name and ports, same cycle-for-cycle behaviour).
//!
//! Yosys maps a multiply to the ECP5's `MULT18X18D` but leaves its input and output registers
//! unused, so every operand and product of an array PE crossed between fabric and DSP: on the
//! fix 12×12 array that crossing was the critical path (docs/fpga.md, "DSP registers"). The
//! generator gives the multiply with those registers a module of its own
//! (`lpgen_hdl::REGISTERED_MULTIPLIER_PREFIX`), and here it becomes one DSP block. On the
//! iCE40 UP5K the same module needs a different text for Yosys 0.23 to map it correctly.

use lpgen_hdl::REGISTERED_MULTIPLIER_PREFIX;

use crate::Target;

/// The widest operand one ECP5 multiplier block takes (signed).
const ECP5_MUL_WIDTH: u32 = 18;

/// The operand width of a registered multiplier module `name`
/// (`lpgen_mul_signed_<W>x<W>_s2`), if it is one.
fn registered_multiplier_width(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(REGISTERED_MULTIPLIER_PREFIX)?;
    let (a, rest) = rest.split_once('x')?;
    let b = rest.strip_suffix("_s2")?;
    let w: u32 = a.parse().ok()?;
    (b.parse::<u32>().ok()? == w && w >= 1).then_some(w)
}

/// The target's text of module `name`, when the target needs its own (and DSPs are in use).
pub fn replacement(t: Target, name: &str, dsp: bool) -> Option<String> {
    let w = registered_multiplier_width(name)?;
    match t {
        Target::Ecp5_85k if dsp && w <= ECP5_MUL_WIDTH => Some(ecp5_registered_multiplier(name, w)),
        Target::Ice40Up5k if dsp => Some(ice40_registered_multiplier(name, w)),
        _ => None,
    }
}

/// The comment, port list and opening of a replacement of `lpgen_mul_signed_<W>x<W>_s2`
/// (the generated module's ports), saying `what` it is.
fn header(name: &str, w: u32, what: &str) -> String {
    format!(
        "// {name}: lpgen's version for this target, read by the synthesis flow instead of the
// generated module: {what}.
`default_nettype none

module {name} (
    input  wire clk,
    input  wire [{wa}:0] a,
    input  wire [{wa}:0] b,
    output wire [{wp}:0] p
);
",
        wa = w - 1,
        wp = 2 * w - 1,
    )
}

/// `lpgen_mul_signed_<W>x<W>_s2` for Yosys 0.23's iCE40 DSP packing: the generated behaviour
/// with the product register marked `keep`. Without it `ice40_dsp` packed this register and
/// the PE's next one into the SB_MAC16, drove the PE's product from the block and from a
/// constant x ("Driver-driver conflict ... Resolved using constant") and the multiplier
/// vanished from the netlist (0 DSPs, a wrong array). Kept, the block takes the operand
/// registers and the product register stays in logic cells.
fn ice40_registered_multiplier(name: &str, w: u32) -> String {
    let head = header(
        name,
        w,
        "the same registers and product, the product register kept out of the DSP block",
    );
    format!(
        "{head}
    reg  [{wa}:0] a_q;
    reg  [{wa}:0] b_q;
    (* keep *) reg  [{wp}:0] p_q;

    always @(posedge clk) begin
        a_q <= a;
        b_q <= b;
        p_q <= $signed(a_q) * $signed(b_q);
    end

    assign p = p_q;
endmodule

`default_nettype wire
",
        wa = w - 1,
        wp = 2 * w - 1,
    )
}

/// The Yosys command that declares the primitives [`replacement`]'s texts instantiate, read
/// before the sources so that `hierarchy` knows them.
pub fn primitives(t: Target) -> &'static str {
    match t {
        Target::Ecp5_85k => "read_verilog -lib +/lattice/cells_bb_ecp5.v",
        _ => "",
    }
}

/// `lpgen_mul_signed_<W>x<W>_s2` as one `MULT18X18D`: operands sign-extended to 18 bits into
/// the block's input registers, the product from its output register (pipeline register
/// bypassed), so the latency stays 2.
fn ecp5_registered_multiplier(name: &str, w: u32) -> String {
    let extend = |x: &str| {
        if w == ECP5_MUL_WIDTH {
            x.to_string()
        } else {
            format!("{{{{{}{{{x}[{}]}}}}, {x}}}", ECP5_MUL_WIDTH - w, w - 1)
        }
    };
    let pins = |pin: &str, wire: &str, n: u32| {
        (0..n)
            .map(|i| format!(".{pin}{i}({wire}[{i}])"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let head = header(
        name,
        w,
        "one MULT18X18D holding the operand registers and the product register",
    );
    let zeros = (0..ECP5_MUL_WIDTH)
        .map(|i| format!(".C{i}(1'b0)"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{head}
    wire [17:0] a18 = {a18};
    wire [17:0] b18 = {b18};
    wire [35:0] p36;

    MULT18X18D #(
        .REG_INPUTA_CLK(\"CLK0\"),
        .REG_INPUTB_CLK(\"CLK0\"),
        .REG_OUTPUT_CLK(\"CLK0\"),
        .GSR(\"DISABLED\")
    ) dsp (
        {pa},
        {pb},
        {zeros},
        .SIGNEDA(1'b1), .SIGNEDB(1'b1), .SOURCEA(1'b0), .SOURCEB(1'b0),
        .CLK0(clk), .CLK1(1'b0), .CLK2(1'b0), .CLK3(1'b0),
        .CE0(1'b1), .CE1(1'b0), .CE2(1'b0), .CE3(1'b0),
        .RST0(1'b0), .RST1(1'b0), .RST2(1'b0), .RST3(1'b0),
        {pp}
    );

    assign p = p36[{wp}:0];
endmodule

`default_nettype wire
",
        wp = 2 * w - 1,
        a18 = extend("a"),
        b18 = extend("b"),
        pa = pins("A", "a18", ECP5_MUL_WIDTH),
        pb = pins("B", "b18", ECP5_MUL_WIDTH),
        pp = pins("P", "p36", 2 * ECP5_MUL_WIDTH),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_registered_multipliers_that_fit_a_block_are_replaced_and_only_on_the_ecp5() {
        assert_eq!(
            registered_multiplier_width("lpgen_mul_signed_16x16_s2"),
            Some(16)
        );
        assert_eq!(
            registered_multiplier_width("lpgen_mul_signed_16x8_s2"),
            None
        );
        assert_eq!(
            registered_multiplier_width("lpgen_mul_signed_16x16_s1"),
            None
        );
        assert_eq!(registered_multiplier_width("lpgen_pe_fix_fix_7_8_s5"), None);
        let e = Target::Ecp5_85k;
        assert!(replacement(e, "lpgen_mul_signed_18x18_s2", true).is_some());
        assert!(replacement(e, "lpgen_mul_signed_19x19_s2", true).is_none());
        assert!(replacement(e, "lpgen_mul_signed_16x16_s2", false).is_none());
        assert!(replacement(Target::Ice40Hx8k, "lpgen_mul_signed_16x16_s2", true).is_none());
        assert!(replacement(Target::Ice40Up5k, "lpgen_mul_signed_16x16_s2", false).is_none());
        let ice = replacement(Target::Ice40Up5k, "lpgen_mul_signed_16x16_s2", true).unwrap();
        assert!(ice.contains("(* keep *) reg  [31:0] p_q;"), "{ice}");
        let text = replacement(e, "lpgen_mul_signed_16x16_s2", true).unwrap();
        assert!(
            text.contains("module lpgen_mul_signed_16x16_s2 ("),
            "{text}"
        );
        assert!(text.contains("{{2{a[15]}}, a}"), "{text}");
        assert!(text.contains(".P35(p36[35])"), "{text}");
        let full = replacement(e, "lpgen_mul_signed_18x18_s2", true).unwrap();
        assert!(full.contains("wire [17:0] a18 = a;"), "{full}");
    }
}
