//! Reading the tools' logs: nextpnr's device utilisation, its timing summary and its errors,
//! and Yosys' final `stat` cell counts. Text logs rather than nextpnr's `--report` JSON: the
//! text is the same in nextpnr 0.4 (Debian) and 0.11 (YoWASP), and it is what a user reads.

/// One line of nextpnr's "Device utilisation" block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Utilisation {
    pub name: String,
    pub used: u64,
    pub available: u64,
}

/// What a nextpnr log says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PnrLog {
    /// The last "Device utilisation" block.
    pub util: Vec<Utilisation>,
    /// The last "Max frequency for clock" figure of each clock, in order of first mention.
    pub fmax: Vec<(String, f64)>,
    /// Every `ERROR:` line, without the prefix.
    pub errors: Vec<String>,
}

impl PnrLog {
    pub fn used(&self, name: &str) -> Option<u64> {
        self.util.iter().find(|u| u.name == name).map(|u| u.used)
    }

    pub fn available(&self, name: &str) -> Option<u64> {
        self.util
            .iter()
            .find(|u| u.name == name)
            .map(|u| u.available)
    }

    /// Fmax of the clock driven by the `clk` port. nextpnr names the net after the buffer it
    /// inserts (`clk$SB_IO_IN_$glb_clk`, `$glbnet$clk$TRELLIS_IO_IN`), so match the `clk` part.
    pub fn fmax_of_clk(&self) -> Option<f64> {
        self.fmax
            .iter()
            .find(|(n, _)| is_clk_net(n))
            .or_else(|| self.fmax.first())
            .map(|(_, f)| *f)
    }
}

/// Whether nextpnr's clock net `name` is the one the `clk` port drives.
pub(crate) fn is_clk_net(name: &str) -> bool {
    name.split('$').any(|part| part == "clk")
}

/// Strips nextpnr's `Info:` prefix and whitespace.
fn body(line: &str) -> &str {
    line.trim_start_matches("Info:").trim()
}

/// `ICESTORM_LC:   364/ 5280     6%` -> ("ICESTORM_LC", 364, 5280).
fn util_line(line: &str) -> Option<Utilisation> {
    let (name, rest) = body(line).split_once(':')?;
    let (used, rest) = rest.split_once('/')?;
    let available = rest.split_whitespace().next()?;
    let name = name.trim();
    if name.is_empty() || name.contains(' ') {
        return None;
    }
    Some(Utilisation {
        name: name.to_string(),
        used: used.trim().parse().ok()?,
        available: available.parse().ok()?,
    })
}

/// `Max frequency for clock 'clk$SB_IO_IN_$glb_clk': 7.72 MHz (FAIL at 12.00 MHz)`, with an
/// `Info:` or `Warning:` prefix; with several clocks nextpnr pads the names after "clock".
fn fmax_line(line: &str) -> Option<(String, f64)> {
    let at = line.find("Max frequency for clock")? + "Max frequency for clock".len();
    let rest = line[at..].trim_start().strip_prefix('\'')?;
    let (clock, rest) = rest.split_once("':")?;
    let mhz = rest.split_whitespace().next()?.parse().ok()?;
    Some((clock.to_string(), mhz))
}

pub fn parse_nextpnr(log: &str) -> PnrLog {
    let mut out = PnrLog::default();
    let mut in_util = false;
    for line in log.lines() {
        if let Some(e) = line.strip_prefix("ERROR:") {
            out.errors.push(e.trim().to_string());
        }
        if body(line) == "Device utilisation:" {
            in_util = true;
            out.util.clear();
            continue;
        }
        if in_util {
            match util_line(line) {
                Some(u) => {
                    out.util.push(u);
                    continue;
                }
                None => in_util = false,
            }
        }
        if let Some((clock, mhz)) = fmax_line(line) {
            match out.fmax.iter_mut().find(|(c, _)| *c == clock) {
                Some(entry) => entry.1 = mhz,
                None => out.fmax.push((clock, mhz)),
            }
        }
    }
    out
}

/// The cell counts of the last `stat` in a Yosys log (`   SB_LUT4   321`), in the order
/// listed. Yosys 0.23 prints name then count; newer versions print count then name, and
/// both are read.
pub fn yosys_cells(log: &str) -> Vec<(String, u64)> {
    let mut cells = Vec::new();
    let mut in_block = false;
    for line in log.lines() {
        let t = line.trim();
        if t.starts_with("Number of cells:") || t.ends_with(" cells") {
            in_block = true;
            cells.clear();
            continue;
        }
        if !in_block {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        let pair = match words.as_slice() {
            [name, n] if n.parse::<u64>().is_ok() => Some((*name, *n)),
            [n, name] if n.parse::<u64>().is_ok() => Some((*name, *n)),
            _ => None,
        };
        match pair {
            Some((name, n)) => cells.push((name.to_string(), n.parse().unwrap_or(0))),
            None => in_block = false,
        }
    }
    cells
}

/// Sum of the cells whose type starts with `prefix` (`SB_DFF` counts every flip-flop kind).
pub fn count_prefix(cells: &[(String, u64)], prefix: &str) -> u64 {
    cells
        .iter()
        .filter(|(n, _)| n.starts_with(prefix))
        .map(|(_, c)| c)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ICE40_OK: &str = include_str!("../tests/fixtures/nextpnr-ice40-ok.log");
    const ICE40_FULL: &str = include_str!("../tests/fixtures/nextpnr-ice40-full.log");
    const ECP5_OK: &str = include_str!("../tests/fixtures/nextpnr-ecp5-ok.log");
    const ICE40_TWO_CLOCKS: &str = include_str!("../tests/fixtures/nextpnr-ice40-two-clocks.log");
    const YOSYS_ICE40: &str = include_str!("../tests/fixtures/yosys-ice40.log");

    #[test]
    fn ice40_utilisation_and_fmax() {
        let p = parse_nextpnr(ICE40_OK);
        assert_eq!(p.used("ICESTORM_LC"), Some(364));
        assert_eq!(p.available("ICESTORM_LC"), Some(5280));
        assert_eq!(p.used("ICESTORM_DSP"), Some(0));
        assert_eq!(p.available("ICESTORM_RAM"), Some(30));
        assert_eq!(p.used("SB_IO"), Some(4));
        // The last figure (after routing), not the one after placement.
        assert_eq!(p.fmax_of_clk(), Some(7.72));
        assert!(p.errors.is_empty());
    }

    #[test]
    fn ice40_full_device_is_an_error() {
        let p = parse_nextpnr(ICE40_FULL);
        assert!(!p.errors.is_empty());
        assert!(p.errors[0].contains("no BELs remaining"), "{:?}", p.errors);
    }

    #[test]
    fn ecp5_utilisation_and_fmax() {
        let p = parse_nextpnr(ECP5_OK);
        assert_eq!(p.used("TRELLIS_COMB"), Some(379));
        assert_eq!(p.used("TRELLIS_FF"), Some(28));
        assert_eq!(p.available("MULT18X18D"), Some(156));
        assert_eq!(p.used("DP16KD"), Some(0));
        assert_eq!(p.fmax_of_clk(), Some(34.80));
    }

    #[test]
    fn yosys_final_stat() {
        let cells = yosys_cells(YOSYS_ICE40);
        assert_eq!(count_prefix(&cells, "SB_DFF"), 28);
        assert_eq!(count_prefix(&cells, "SB_LUT4"), 321);
        assert_eq!(count_prefix(&cells, "SB_MAC16"), 0);
        let newer = "  1 cells\n       33   CCU2C\n       28   TRELLIS_FF\n\n";
        assert_eq!(count_prefix(&yosys_cells(newer), "TRELLIS_FF"), 28);
    }

    #[test]
    fn several_clocks_pick_clk() {
        // A DSP's unused clock pin becomes a second "clock" (posit-mul posit:32:2 on the UP5K).
        let p = parse_nextpnr(ICE40_TWO_CLOCKS);
        assert_eq!(p.fmax.len(), 2);
        assert_eq!(p.fmax_of_clk(), Some(8.69));
    }

    #[test]
    fn garbage_gives_nothing() {
        let p = parse_nextpnr("random text\nInfo: Device utilisation:\nInfo: nonsense\n");
        assert!(p.util.is_empty() && p.fmax.is_empty());
        assert_eq!(p.fmax_of_clk(), None);
        assert!(yosys_cells("").is_empty());
    }
}
