//! Prometheus metrics of a served job (`--metrics ADDR`), for jobs that run overnight: the depth
//! and its pace (rows done, rows per second, ETA), the tasks or owners of the running level,
//! the live workers and the bytes they moved. A plain HTTP/1.1 responder on its own thread
//! (it reads one request head, answers, closes): a scrape never touches the job's threads or
//! tokio's. A job with a token (required beyond loopback) answers only a scrape that presents
//! it as `Authorization: Bearer TOKEN`.

use super::hub::Hub;
use crate::progress::Reporter;
use cubefarm_proto::auth::Token;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The largest request head read (a scrape's is a few hundred bytes).
const MAX_HEAD: usize = 8192;

/// The metrics text of the job as it stands.
pub fn render(hub: &Hub, reporter: &Reporter) -> String {
    let status = hub.status();
    let traffic = hub.traffic();
    let pace = reporter.pace();
    let unit = reporter.unit();
    let units = format!("{}{}", unit[..1].to_ascii_uppercase(), &unit[1..]);
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, value: String| {
        let _ = writeln!(
            out,
            "# HELP cubefarm_{name} {help}\n# TYPE cubefarm_{name} gauge\ncubefarm_{name} {value}"
        );
    };
    gauge("depth", "Depth being computed.", pace.depth.to_string());
    gauge("progress_done", &format!("{units} of the running depth done."), pace.rows_done.to_string());
    gauge("progress_total", &format!("{units} of a depth."), pace.total_rows.to_string());
    gauge(
        "progress_per_second",
        &format!("{units} done per second in the running depth."),
        format!("{:.1}", pace.rows_per_second),
    );
    let eta = if pace.eta_seconds.is_finite() { format!("{:.0}", pace.eta_seconds) } else { "+Inf".into() };
    gauge("eta_seconds", "Seconds to the end of the running depth at its pace.", eta);
    gauge("tasks", "Tasks (or owners of a row search) of the running level.", status.tasks.to_string());
    gauge("tasks_done", "Tasks (or owners) done with the running level.", status.done.to_string());
    gauge("tasks_leased", "Tasks at work (or owners still working).", status.leased.to_string());
    gauge("live_workers", "Workers heard from within the liveness time.", status.live_workers.to_string());
    gauge("finished", "1 once the job is done.", u8::from(status.finished).to_string());
    let _ = writeln!(
        out,
        "# HELP cubefarm_coordinator_bytes_total Bytes through the coordinator's links, both ways.\n\
         # TYPE cubefarm_coordinator_bytes_total counter\ncubefarm_coordinator_bytes_total {}",
        traffic.through_coordinator_bytes
    );
    let received: Vec<u64> = traffic.workers.iter().map(|w| w.received_bytes).collect();
    let sent: Vec<u64> = traffic.workers.iter().map(|w| w.sent_bytes).collect();
    for (name, help, values) in [
        ("received", "Bytes a worker received on all its links.", received),
        ("sent", "Bytes a worker sent on all its links.", sent),
    ] {
        let metric = format!("cubefarm_worker_{name}_bytes_total");
        let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} counter");
        for (w, value) in traffic.workers.iter().zip(values) {
            let label = w.name.replace('\\', "\\\\").replace('"', "\\\"");
            let _ = writeln!(out, "{metric}{{worker=\"{label}\"}} {value}");
        }
    }
    out
}

/// Serves [`render`] on `listener` until `stop` is set (checked every 200 ms).
pub fn serve(listener: TcpListener, token: Option<Token>, hub: &Hub, reporter: &Reporter, stop: &AtomicBool) {
    let _ = listener.set_nonblocking(true);
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                if let Err(e) = answer(stream, token.as_ref(), hub, reporter) {
                    tracing::debug!("metrics request: {e}");
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(200))
            }
            Err(e) => {
                tracing::warn!("metrics listener: {e}");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }
}

/// Reads one request head and answers it: the metrics for `GET /metrics` (with the token when
/// there is one), else a short error status.
fn answer(
    mut stream: TcpStream,
    token: Option<&Token>,
    hub: &Hub,
    reporter: &Reporter,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf)?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return respond(&mut stream, "400 Bad Request", "a request head of at most 8 KiB\n");
        }
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut lines = head.split("\r\n");
    let request: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
    if request.len() != 3 || request[0] != "GET" {
        return respond(&mut stream, "405 Method Not Allowed", "GET /metrics\n");
    }
    if request[1] != "/metrics" {
        return respond(&mut stream, "404 Not Found", "GET /metrics\n");
    }
    if let Some(token) = token {
        let presented = lines
            .filter_map(|l| l.split_once(':'))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("authorization"))
            .and_then(|(_, value)| value.trim().strip_prefix("Bearer "))
            .map(str::trim);
        if !presented.is_some_and(|p| token.matches(p.as_bytes())) {
            return respond(&mut stream, "401 Unauthorized", "Authorization: Bearer TOKEN\n");
        }
    }
    respond(&mut stream, "200 OK", &render(hub, reporter))
}

fn respond(stream: &mut TcpStream, status: &str, body: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}
