//! scx_rusty's periodic work in userspace: the tuner and the balancer, and the `tune` map
//! that both decide part of. One owner holds all three, so the map has one writer.

use crate::balance::LbJob;
use crate::bpf_io::write_tune;
use crate::tuner::{Tuner, Tuning};
use anyhow::Result;
use libbpf_rs::MapCore;
use scxkit::procstat::read_proc_stat;
use scxkit_runtime::jobs::Step;
use std::time::Duration;

/// The `tune` map's one writer: the tuner's latest decisions, with the number of the last
/// balancing pass whose requests are written (each task looks for its request once a pass).
pub struct TuneMap<'a> {
    map: &'a dyn MapCore,
    tuning: Tuning,
    lb_seq: u64,
}

impl<'a> TuneMap<'a> {
    /// Writes the starting decisions, before any pass.
    pub fn new(map: &'a dyn MapCore, tuning: Tuning) -> Result<TuneMap<'a>> {
        let tune = TuneMap { map, tuning, lb_seq: 0 };
        tune.write()?;
        Ok(tune)
    }

    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }

    /// Writes the tuner's new decisions.
    pub fn set_tuning(&mut self, tuning: Tuning) -> Result<()> {
        self.tuning = tuning;
        self.write()
    }

    /// Tells BPF that a new pass's requests are written.
    pub fn next_pass(&mut self) -> Result<()> {
        self.lb_seq += 1;
        self.write()
    }

    fn write(&self) -> Result<()> {
        write_tune(self.map, &self.tuning.to_input(self.lb_seq))
    }
}

/// The owner of the periodic work of one attempt.
pub struct Control<'a> {
    pub tuner: Tuner,
    pub lb: LbJob<'a>,
    pub tune: TuneMap<'a>,
}

impl Control<'_> {
    /// The tuner every `tune_interval`, the balancer every `lb_interval`.
    pub fn steps<'a>(tune_interval: Duration, lb_interval: Duration) -> [Step<Control<'a>>; 2] {
        [("tuner", tune_interval, Control::tune), ("load balancer", lb_interval, Control::balance)]
    }

    fn tune(&mut self) -> Result<()> {
        if let Some(tuning) = self.tuner.step(read_proc_stat()?) {
            self.tune.set_tuning(tuning)?;
            self.lb.publish_tuning(self.tune.tuning());
        }
        Ok(())
    }

    fn balance(&mut self) -> Result<()> {
        if self.lb.run(self.tune.tuning().fully_utilized)? {
            self.tune.next_pass()?;
        }
        Ok(())
    }
}
