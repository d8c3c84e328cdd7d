//! The result of an enumeration: per-depth counts with the job's identity and cost, printed as
//! a table or serialized as JSON (`{"space":..,"metric":..,"order":..,"depths":[..],
//! "elapsed_s":..,"peak_rss_bytes":..}`).

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Counts of one depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DepthCounts {
    pub depth: u32,
    /// Positions at this distance.
    pub positions: u64,
    /// Classes under the 48 symmetries M.
    pub classes_sym: u64,
    /// Classes under M and inversion.
    pub classes_sym_inv: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    pub space: String,
    pub metric: String,
    /// Number of positions in the whole space (the cube's exceeds 64 bits).
    pub order: u128,
    pub depths: Vec<DepthCounts>,
    pub elapsed_s: f64,
    pub peak_rss_bytes: u64,
}

/// Groups digits by thousands: 88179840 -> "88,179,840".
pub fn thousands(n: impl Into<u128>) -> String {
    let digits = n.into().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

impl Distribution {
    /// Sum of the positions column.
    pub fn total_positions(&self) -> u128 {
        self.depths.iter().map(|d| d.positions as u128).sum()
    }

    /// True when the depths cover the whole space.
    pub fn is_complete(&self) -> bool {
        self.total_positions() == self.order
    }

    /// A plain-text table, one line per depth, then totals.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        // The metric "h" (H's own moves, of the spaces h and hprime) is named in words: "hprime
        // h" reads as two spaces.
        let metric = match self.metric.as_str() {
            "h" => "in H's 10 moves".to_string(),
            m => m.to_string(),
        };
        let _ = writeln!(s, "{} {metric} ({} positions)", self.space, thousands(self.order));
        let _ =
            writeln!(s, "{:>5} {:>22} {:>20} {:>20}", "depth", "positions", "classes_sym", "classes_sym_inv");
        for d in &self.depths {
            let _ = writeln!(
                s,
                "{:>5} {:>22} {:>20} {:>20}",
                d.depth,
                thousands(d.positions),
                thousands(d.classes_sym),
                thousands(d.classes_sym_inv)
            );
        }
        let sum = |f: fn(&DepthCounts) -> u64| thousands(self.depths.iter().map(f).sum::<u64>());
        let _ = writeln!(
            s,
            "{:>5} {:>22} {:>20} {:>20}",
            "total",
            sum(|d| d.positions),
            sum(|d| d.classes_sym),
            sum(|d| d.classes_sym_inv)
        );
        if !self.is_complete() {
            let _ = writeln!(
                s,
                "(stopped early: {} of {} positions lie within depth {})",
                thousands(self.total_positions()),
                thousands(self.order),
                self.depths.last().map_or(0, |d| d.depth)
            );
        }
        s
    }

    /// A markdown table of the same content.
    pub fn to_markdown(&self) -> String {
        let mut s =
            String::from("| depth | positions | classes_sym | classes_sym_inv |\n|---:|---:|---:|---:|\n");
        for d in &self.depths {
            let _ =
                writeln!(s, "| {} | {} | {} | {} |", d.depth, d.positions, d.classes_sym, d.classes_sym_inv);
        }
        s
    }
}

/// The findings of a verification as they are made: each check's outcome and description go to
/// `report` at once (a long verification shows its progress), the failed ones are kept.
pub struct Findings<'a> {
    report: &'a mut dyn FnMut(bool, &str),
    failures: Vec<String>,
}

impl<'a> Findings<'a> {
    pub fn new(report: &'a mut dyn FnMut(bool, &str)) -> Self {
        Findings { report, failures: Vec::new() }
    }

    /// Reports a check and keeps it if it failed.
    pub fn check(&mut self, ok: bool, what: String) {
        (self.report)(ok, &what);
        if !ok {
            self.failures.push(what);
        }
    }

    /// Reports a detail of a check without counting it as one.
    pub fn note(&mut self, ok: bool, what: &str) {
        (self.report)(ok, what);
    }

    pub fn into_failures(self) -> Vec<String> {
        self.failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0u64), "0");
        assert_eq!(thousands(999u64), "999");
        assert_eq!(thousands(1000u64), "1,000");
        assert_eq!(thousands(88_179_840u64), "88,179,840");
        assert_eq!(thousands(43_252_003_274_489_856_000u128), "43,252,003,274,489,856,000");
    }
}
