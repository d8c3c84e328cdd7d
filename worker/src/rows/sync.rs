//! A row search's protocol types as `RowsSync` carries them: the worker's [`Status`] in the
//! request, the coordinator's [`Plan`] (and the job) in the reply. Both sides convert here.

use cubefarm_proto::v1;
use shared::bfs::Direction;
use shared::runtime::rows::{JobInfo, LevelOrder, Plan, Status};
use shared::space::RowCounts;

/// Puts `status` (of job `job`) in a sync request.
pub fn put_status(r: &mut v1::RowsSyncRequest, job: u64, s: &Status) {
    r.job_id = job;
    r.ready = s.ready;
    r.room_bytes = s.room;
    r.epoch = s.epoch;
    r.version = s.version;
    r.settled = s.settled;
    r.lacking = s.lacking.clone();
    r.failure = s.failure.clone().unwrap_or_default();
    if let Some((depth, percent)) = s.progress {
        (r.progress_level, r.progress_percent) = (depth + 1, percent.into());
    }
    if let Some((depth, parts)) = &s.finished {
        r.finished = depth + 1;
        for (k, c) in parts {
            r.finished_parts.push(*k);
            r.finished_counts.extend([c.entries, c.positions, c.classes, c.self_inverse]);
        }
    }
}

/// The status a sync request carries.
pub fn status_of(r: &v1::RowsSyncRequest) -> Result<Status, String> {
    let finished = match r.finished {
        0 => None,
        d => {
            if r.finished_counts.len() != 4 * r.finished_parts.len() {
                return Err(format!(
                    "{} counts for {} parts",
                    r.finished_counts.len(),
                    r.finished_parts.len()
                ));
            }
            let parts = r
                .finished_parts
                .iter()
                .zip(r.finished_counts.chunks(4))
                .map(|(&k, c)| {
                    (k, RowCounts { entries: c[0], positions: c[1], classes: c[2], self_inverse: c[3] })
                })
                .collect();
            Some((d - 1, parts))
        }
    };
    Ok(Status {
        ready: r.ready,
        room: r.room_bytes,
        epoch: r.epoch,
        version: r.version,
        settled: r.settled,
        lacking: r.lacking.clone(),
        finished,
        progress: r.progress_level.checked_sub(1).map(|d| (d, r.progress_percent.min(100) as u8)),
        failure: (!r.failure.is_empty()).then(|| r.failure.clone()),
    })
}

/// A sync reply with the job and its plan.
pub fn reply_of(job: &JobInfo, plan: &Plan, peers: Vec<(u64, String)>) -> v1::RowsSyncReply {
    let (level, direction, upload) = match plan.level {
        None => (0, 0, false),
        Some(o) => {
            let direction = match o.direction {
                Direction::Start => 0,
                Direction::Forward => 1,
                Direction::Backward => 2,
            };
            (o.depth + 1, direction, o.upload)
        }
    };
    v1::RowsSyncReply {
        wait: false,
        done: false,
        job_id: job.id,
        job_spec: job.spec.clone(),
        positions_only: job.positions_only,
        rows_per_part: job.rows_per_part,
        rows: job.rows,
        epoch: plan.epoch,
        version: plan.version,
        owner: plan.owner.clone(),
        depth: plan.depth.clone(),
        source: plan.source.clone(),
        peers: peers.into_iter().map(|(worker_id, address)| v1::PeerAddress { worker_id, address }).collect(),
        level,
        direction,
        upload,
    }
}

/// The job a sync reply names.
pub fn job_of(r: &v1::RowsSyncReply) -> JobInfo {
    JobInfo {
        id: r.job_id,
        spec: r.job_spec.clone(),
        rows: r.rows,
        rows_per_part: r.rows_per_part,
        positions_only: r.positions_only,
    }
}

/// The plan a sync reply carries, checked for its sizes.
pub fn plan_of(r: &v1::RowsSyncReply) -> Result<Plan, String> {
    let parts = r.owner.len();
    if r.depth.len() != parts || r.source.len() != parts {
        return Err(format!("{} owners, {} depths, {} sources", parts, r.depth.len(), r.source.len()));
    }
    let level = match r.level {
        0 => None,
        d => {
            let direction = match r.direction {
                0 => Direction::Start,
                1 => Direction::Forward,
                2 => Direction::Backward,
                other => return Err(format!("no direction {other}")),
            };
            Some(LevelOrder { depth: d - 1, direction, upload: r.upload })
        }
    };
    Ok(Plan {
        epoch: r.epoch,
        version: r.version,
        owner: r.owner.clone(),
        depth: r.depth.clone(),
        source: r.source.clone(),
        level,
    })
}
