//! Runs the runtime's simulator: `simulate [rows|leases] FIRST [COUNT]` runs seeds FIRST ..
//! FIRST + COUNT (default 1) and prints each failure with its seed and last events.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (kind, rest) = match args.first().map(String::as_str) {
        Some("rows") | Some("leases") => (args[0].clone(), &args[1..]),
        _ => ("rows".to_string(), &args[..]),
    };
    let first: u64 = rest.first().and_then(|s| s.parse().ok()).unwrap_or(0);
    let count: u64 = rest.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let start = std::time::Instant::now();
    let mut failed = 0;
    let mut events = 0;
    for seed in first..first + count {
        let run = match kind.as_str() {
            "leases" => shared::runtime::sim::run_leases(seed),
            _ => shared::runtime::sim::run_rows(seed),
        };
        match run {
            Ok(o) => events += o.events,
            Err(e) => {
                failed += 1;
                eprintln!("{e}\n");
            }
        }
    }
    println!(
        "{kind}: {count} seeds from {first}, {failed} failed, {events} events, {:.1} s",
        start.elapsed().as_secs_f64()
    );
    if failed > 0 {
        std::process::exit(1);
    }
}
