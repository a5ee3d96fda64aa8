//! The serial wrapper simulated with Icarus: `dout` is the parity of every output bit, taken a
//! fixed number of cycles earlier (one for the output register, one per level of the XOR
//! tree, one for `dout`), for widths below, at and above a tree level.

use std::process::Command;

use lpgen_fpga::wrap::{serial_wrapper, Port, XOR_PER_LEVEL};

/// Cycles from the unit's output to `dout`: the output register, the tree's levels, `dout`.
fn latency(width: u32) -> usize {
    let (mut w, mut levels) = (width, 0);
    while w > XOR_PER_LEVEL {
        w = w.div_ceil(XOR_PER_LEVEL);
        levels += 1;
    }
    2 + levels
}

/// Simulates the wrapper around a unit whose `width` outputs copy its inputs; returns
/// (parity of the unit's outputs, `dout`) after each clock edge, `None` where undefined.
fn simulate(width: u32) -> Vec<(Option<u8>, Option<u8>)> {
    let ports = vec![
        Port {
            name: "clk".into(),
            input: true,
            width: 1,
        },
        Port {
            name: "a".into(),
            input: true,
            width,
        },
        Port {
            name: "y".into(),
            input: false,
            width,
        },
    ];
    let wrapper = serial_wrapper("copy", &ports).unwrap();
    let unit = format!(
        "module copy(input wire clk, input wire [{m}:0] a, output wire [{m}:0] y);\n  assign y = a;\nendmodule\n",
        m = width - 1
    );
    // din: a fixed pseudo-random bit stream, so the parity changes from cycle to cycle.
    let tb = "module tb;\n  reg clk = 0, rst = 0, din = 0;\n  wire dout;\n  reg [31:0] lfsr = 32'h1;\n  integer c;\n  copy_wrap w (.clk(clk), .rst(rst), .din(din), .dout(dout));\n  initial begin\n    w.sr = 0;\n    for (c = 0; c < 400; c = c + 1) begin\n      din = lfsr[0];\n      lfsr = {lfsr[30:0], lfsr[31] ^ lfsr[21] ^ lfsr[1] ^ lfsr[0]};\n      #1 clk = 1; #1 clk = 0;\n      $display(\"%0d %0d\", ^w.res, dout);\n    end\n    $finish;\n  end\nendmodule\n";
    let dir = std::env::temp_dir().join(format!("lpgen-wrap-{}-{width}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in [
        ("wrap.v", &wrapper),
        ("copy.v", &unit),
        ("tb.v", &tb.to_string()),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let o = Command::new("iverilog")
        .args(["-g2005", "-o"])
        .arg(dir.join("sim"))
        .args(["tb.v", "wrap.v", "copy.v"].map(|f| dir.join(f)))
        .output()
        .expect("iverilog runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new("vvp").arg(dir.join("sim")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (p, d) = l.split_once(' ').unwrap();
            (p.parse().ok(), d.parse().ok())
        })
        .collect()
}

#[test]
fn dout_is_the_parity_of_every_output_a_fixed_number_of_cycles_later() {
    for width in [1, 16, 17, 256, 257, 2304, 5000] {
        let rows = simulate(width);
        assert_eq!(rows.len(), 400, "width {width}");
        let lat = latency(width);
        let parities: Vec<u8> = rows.iter().map(|r| r.0.unwrap()).collect();
        // The parity changes, so a wrong latency or a dropped bit would show.
        assert!(
            parities.iter().filter(|&&p| p == 1).count() > 100,
            "width {width}"
        );
        // The outputs after edge t are loaded into the output register at edge t + 1 and
        // reach `dout` at edge t + lat.
        for t in 0..rows.len() - lat {
            assert_eq!(
                rows[t + lat].1,
                Some(parities[t]),
                "width {width}, cycle {t}, latency {lat}"
            );
        }
    }
}
