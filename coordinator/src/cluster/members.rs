//! The workers of a job: who registered, with what (threads, memory, where other workers reach
//! them), when each was last heard from, and what each says it sent and received. Liveness is
//! separate from leases: a worker silent for longer than the liveness timeout is *lost*, its
//! leases and rows are recovered, and it must register again to take part.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// One registered worker.
#[derive(Clone, Debug)]
pub struct Member {
    pub id: u64,
    pub name: String,
    pub threads: u32,
    /// The most memory it may use (0: unknown).
    pub mem_limit: u64,
    /// Where other workers reach its `Peer` service.
    pub peer_address: String,
    pub last_seen: Instant,
    pub lost: bool,
    /// Bytes it reports having sent and received on all its links.
    pub sent: u64,
    pub received: u64,
    /// Bytes of its messages the coordinator sent to it and received from it.
    pub coordinator_sent: u64,
    pub coordinator_received: u64,
    /// Told that the job is done.
    pub dismissed: bool,
    /// A place held for a worker of an earlier run (see [`Members::expect`]).
    pub expected: bool,
}

#[derive(Debug)]
pub struct Members {
    members: BTreeMap<u64, Member>,
    next_id: u64,
    pub liveness: Duration,
    /// Bytes of the coordinator's messages with no known worker (registrations, uploads, which
    /// name their task and not their worker).
    pub unattributed: u64,
}

impl Members {
    pub fn new(liveness: Duration) -> Self {
        Members { members: BTreeMap::new(), next_id: 1, liveness, unattributed: 0 }
    }

    /// Registers a worker; returns its id: `previous` if this coordinator knows it (a worker
    /// it expects back after a restart, see [`Self::expect`], one that was lost, or one whose
    /// process restarted with its `--state-dir`), else a new one.
    pub fn register(
        &mut self,
        name: &str,
        threads: u32,
        mem_limit: u64,
        peer_address: &str,
        previous: u64,
    ) -> u64 {
        let returning = previous != 0 && self.members.contains_key(&previous);
        let id = if returning {
            previous
        } else {
            self.next_id += 1;
            self.next_id - 1
        };
        self.members.insert(
            id,
            Member {
                id,
                name: name.to_string(),
                threads,
                mem_limit,
                peer_address: peer_address.to_string(),
                last_seen: Instant::now(),
                lost: false,
                sent: 0,
                received: 0,
                coordinator_sent: 0,
                coordinator_received: 0,
                dismissed: false,
                expected: false,
            },
        );
        id
    }

    /// Holds places for workers `ids` of an earlier run (a resumed job): they keep their ids
    /// when they register again within the liveness timeout, and are lost otherwise.
    pub fn expect(&mut self, ids: &[u64]) {
        for &id in ids {
            self.members.entry(id).or_insert_with(|| Member {
                id,
                name: format!("worker {id} (not back yet)"),
                threads: 1,
                mem_limit: 0,
                peer_address: String::new(),
                last_seen: Instant::now(),
                lost: false,
                sent: 0,
                received: 0,
                coordinator_sent: 0,
                coordinator_received: 0,
                dismissed: false,
                expected: true,
            });
            self.next_id = self.next_id.max(id + 1);
        }
    }

    /// Notes that `id` was heard from; false if it is unknown or was declared lost (it must
    /// register again).
    pub fn seen(&mut self, id: u64) -> bool {
        match self.members.get_mut(&id) {
            Some(m) if !m.lost => {
                m.last_seen = Instant::now();
                true
            }
            _ => false,
        }
    }

    /// A heartbeat: seen, with the traffic it reports.
    pub fn heartbeat(&mut self, id: u64, sent: u64, received: u64) -> bool {
        if !self.seen(id) {
            return false;
        }
        let m = self.members.get_mut(&id).expect("seen");
        m.sent = m.sent.max(sent);
        m.received = m.received.max(received);
        true
    }

    /// Counts bytes of the coordinator's link with `id`.
    pub fn count(&mut self, id: u64, sent: u64, received: u64) {
        match self.members.get_mut(&id) {
            Some(m) => {
                m.coordinator_sent += sent;
                m.coordinator_received += received;
            }
            None => self.unattributed += sent + received,
        }
    }

    /// Declares lost every live worker silent for longer than the liveness timeout at `now`;
    /// returns them.
    pub fn expire(&mut self, now: Instant) -> Vec<u64> {
        let liveness = self.liveness;
        let mut lost = Vec::new();
        for m in self.members.values_mut() {
            if !m.lost && now.saturating_duration_since(m.last_seen) > liveness {
                m.lost = true;
                lost.push(m.id);
                tracing::warn!(
                    "worker {} ({}) silent for {:.0} s: declared lost",
                    m.id,
                    m.name,
                    now.saturating_duration_since(m.last_seen).as_secs_f64()
                );
            }
        }
        lost
    }

    pub fn get(&self, id: u64) -> Option<&Member> {
        self.members.get(&id)
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut Member> {
        self.members.get_mut(&id)
    }

    /// Workers not lost, in id order.
    pub fn live(&self) -> impl Iterator<Item = &Member> {
        self.members.values().filter(|m| !m.lost)
    }

    /// Where other workers reach each live worker that registered in this run (a place held
    /// for a worker not back yet has no address).
    pub fn peer_addresses(&self) -> Vec<(u64, String)> {
        self.live()
            .filter(|m| !m.expected && !m.peer_address.is_empty())
            .map(|m| (m.id, m.peer_address.clone()))
            .collect()
    }

    pub fn is_live(&self, id: u64) -> bool {
        self.members.get(&id).is_some_and(|m| !m.lost)
    }

    /// Every worker ever registered, in id order.
    pub fn all(&self) -> impl Iterator<Item = &Member> {
        self.members.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silent_workers_are_lost_and_stay_lost() {
        let mut m = Members::new(Duration::from_secs(30));
        let a = m.register("a", 2, 1 << 30, "http://127.0.0.1:1", 0);
        let b = m.register("b", 2, 1 << 30, "http://127.0.0.1:2", 0);
        assert_ne!(a, b);
        let t0 = Instant::now();
        assert!(m.expire(t0 + Duration::from_secs(10)).is_empty());
        // b speaks at 20 s; a stays silent.
        m.members.get_mut(&b).unwrap().last_seen = t0 + Duration::from_secs(20);
        assert_eq!(m.expire(t0 + Duration::from_secs(31)), [a]);
        assert!(!m.is_live(a) && m.is_live(b));
        // A lost worker is not revived by speaking: it must register again.
        assert!(!m.seen(a));
        assert!(!m.heartbeat(a, 1, 1));
        assert!(m.heartbeat(b, 5, 7));
        assert_eq!((m.get(b).unwrap().sent, m.get(b).unwrap().received), (5, 7));
        assert_eq!(m.live().map(|w| w.id).collect::<Vec<_>>(), [b]);
    }

    #[test]
    fn known_workers_keep_their_ids_and_others_do_not() {
        let mut m = Members::new(Duration::from_secs(30));
        m.expect(&[3, 5]);
        assert_eq!(m.register("back", 1, 0, "http://h:1", 5), 5);
        assert!(!m.get(5).unwrap().expected);
        // An id nobody knows is not handed out.
        assert_eq!(m.register("other", 1, 0, "http://h:3", 9), 6);
        // A place not taken within the liveness timeout is lost; the worker may still come
        // back as itself (its disk keeps its parts' levels).
        m.members.get_mut(&3).unwrap().last_seen = Instant::now() - Duration::from_secs(31);
        assert_eq!(m.expire(Instant::now()), [3]);
        assert_eq!(m.register("late", 1, 0, "http://h:4", 3), 3);
        assert!(m.is_live(3));
    }
}
