//! The rustland policy: weighted vruntime, where a task that often sleeps of its own accord
//! (a game, an audio thread, a shell) is charged a fraction of the time it runs.

use log::info;
use scxkit_userspace::memory::monotonic_ns;
use scxkit_userspace::{Decision, Dispatcher, Policy, QueuedTask, Target, WakeGrant};
#[cfg(test)]
use scxkit_userspace::KernelView;
use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroU32;

/// Weight of a nice-0 task.
const WEIGHT_NICE0: u64 = scxkit_userspace::NICE0_WEIGHT as u64;
/// The switch rate is averaged over periods of at least this long, ns...
const RATE_PERIOD_NS: u64 = 100_000_000;
/// ...but a task's first period may close after this long, with at least
/// FIRST_PERIOD_MIN_SWITCHES, at a rate of FIRST_PERIOD_RATE_FACTOR times the threshold or
/// more (two sleeps within 50 ms by default), and then seeds the average at
/// FIRST_PERIOD_SEED_FACTOR times the threshold: a 60 Hz frame loop started beside a build
/// is interactive from its third frame, rather than waiting behind the build's jobs for
/// 100 ms (its frames 1 to 6 were late by up to 85 ms, one CPU). A CPU-bound task that
/// slept once at its start is not promoted, and one promoted so is demoted after three
/// quiet periods.
const FIRST_PERIOD_MIN_NS: u64 = 10_000_000;
const FIRST_PERIOD_MIN_SWITCHES: u64 = 2;
const FIRST_PERIOD_RATE_FACTOR: f64 = 4.0;
const FIRST_PERIOD_SEED_FACTOR: f64 = 2.0;
/// Tasks not seen for this long are forgotten, ns.
const FORGET_AFTER_NS: u64 = 10_000_000_000;
/// Room for this many tasks' state, made up front so the loop does not allocate.
const TASKS_CAPACITY: usize = 8192;
/// The queue's clock also advances at half a fair share's rate ([`Policy::clock_runtime_divisor`]):
/// a hog placed ahead of it gets at least about half a fair share beside fork loops (11%
/// when only a task starting ahead of it moved it), while new tasks and interactive ones
/// keep their lead over hogs. At the full rate hogs took their whole share back from short
/// build jobs and a frame loop (one CPU, four times the desktop background: 13 build jobs/s
/// against 17, 17.8% of the frames dropped against 6.4%, in one boot).
const CLOCK_RUNTIME_DIVISOR: u32 = 2;

#[derive(Debug, Clone)]
pub struct Settings {
    pub slice_ns: u64,
    pub slice_min_ns: u64,
    /// The common slice's floor grows by slice_min_ns per this many tasks waiting per CPU;
    /// 0: it stays at slice_min_ns.
    pub crowd_tasks: u64,
    pub nvcsw_threshold: f64,
    pub slice_boost: u64,
    pub watch: Vec<i32>,
}

/// What rustland remembers of a task between hand-overs.
#[derive(Debug, Clone, Copy)]
struct TaskState {
    vruntime: u64,
    /// Voluntary switches per second, a decaying average.
    nvcsw_rate: f64,
    /// Whether a period has closed yet (nvcsw_rate means something).
    rate_known: bool,
    rate_nvcsw: u64,
    rate_since_ns: u64,
    last_seen_ns: u64,
    watch_logged_ns: u64,
}

impl TaskState {
    fn new(vruntime: u64, nvcsw: u64, now_ns: u64) -> TaskState {
        TaskState { vruntime, nvcsw_rate: 0.0, rate_known: false, rate_nvcsw: nvcsw, rate_since_ns: now_ns, last_seen_ns: now_ns, watch_logged_ns: 0 }
    }

    /// Whether the task has slept (`nvcsw` switches so far) since it was first seen, its
    /// rate not known yet.
    fn slept_unclassed(&self, nvcsw: u64) -> bool {
        !self.rate_known && nvcsw > self.rate_nvcsw
    }

    /// Folds the switches since the last period into the average: each period of at least
    /// RATE_PERIOD_NS weighs a quarter. A first period closed early, at a high rate
    /// (FIRST_PERIOD_MIN_NS), seeds the average: promotion is quick, demotion takes full
    /// periods.
    fn update_rate(&mut self, nvcsw: u64, now_ns: u64, threshold: f64) {
        let elapsed_ns = now_ns.saturating_sub(self.rate_since_ns);
        let switches = nvcsw.saturating_sub(self.rate_nvcsw);
        if elapsed_ns < FIRST_PERIOD_MIN_NS {
            return;
        }
        let rate = switches as f64 * 1e9 / elapsed_ns as f64;
        if elapsed_ns >= RATE_PERIOD_NS {
            self.nvcsw_rate = 0.75 * self.nvcsw_rate + 0.25 * rate;
        } else if !self.rate_known
            && switches >= FIRST_PERIOD_MIN_SWITCHES
            && rate >= threshold * FIRST_PERIOD_RATE_FACTOR
        {
            self.nvcsw_rate = threshold * FIRST_PERIOD_SEED_FACTOR;
        } else {
            return;
        }
        self.rate_known = true;
        self.rate_nvcsw = nvcsw;
        self.rate_since_ns = now_ns;
    }
}

pub struct Rustland {
    settings: Settings,
    tasks: HashMap<i32, TaskState>,
    /// Tasks waiting, by (vruntime, arrival): the smallest runs first; with whether each is
    /// interactive.
    queue: BTreeMap<(u64, u64), (QueuedTask, bool)>,
    arrivals: u64,
    min_vruntime: u64,
    forget_at_ns: u64,
    /// What a waker keeps of its slice, as of the last dispatch (0: the default).
    waker_slice_ns: u64,
}

impl Rustland {
    pub fn new(settings: Settings) -> Rustland {
        Rustland {
            settings,
            tasks: HashMap::with_capacity(TASKS_CAPACITY),
            queue: BTreeMap::new(),
            arrivals: 0,
            min_vruntime: 0,
            forget_at_ns: 0,
            waker_slice_ns: 0,
        }
    }

    fn is_interactive(&self, state: &TaskState) -> bool {
        state.nvcsw_rate >= self.settings.nvcsw_threshold
    }

    /// Tasks waiting per CPU, here and in the kernel's queue (this policy hands every task
    /// over at once).
    fn waiting_per_cpu(&self, nr_cpus: usize, nr_queued_in_kernel: u64) -> u64 {
        (self.queue.len() as u64).saturating_add(nr_queued_in_kernel) / nr_cpus.max(1) as u64
    }

    /// The least common slice with `per_cpu` tasks waiting per CPU: the minimum times
    /// `per_cpu` / `crowd_tasks` (whole), at least the minimum and at most the base slice. In
    /// a crowd every slice's end is a switch, and a wakeup a task makes waits for its waker's
    /// (see [`Policy::deferred_waker_slice_ns`]): with a 1 ms floor hackbench's 200 senders
    /// on one CPU were switched out at every tick, 29,000 to 37,000 times (0.71x EEVDF's
    /// time). Fewer than 2 x `crowd_tasks` waiting (a desktop's background) keep the minimum.
    /// No cap on a crowd's round: with 100 CPU hogs per CPU it lasts about 1.2 s, and the
    /// framework's bound on a wait (1 s, then any task overdue goes first) takes over.
    fn crowd_floor_ns(&self, per_cpu: u64) -> u64 {
        let Settings { slice_ns, slice_min_ns, crowd_tasks, .. } = self.settings;
        if crowd_tasks == 0 {
            return slice_min_ns;
        }
        slice_min_ns.saturating_mul(per_cpu / crowd_tasks).clamp(slice_min_ns, slice_ns.max(slice_min_ns))
    }

    /// The slice for the next tasks with `per_cpu` waiting per CPU: shorter as more wait,
    /// down to the crowd's floor.
    fn slice_ns(&self, per_cpu: u64) -> u64 {
        (self.settings.slice_ns / per_cpu.saturating_add(1)).max(self.crowd_floor_ns(per_cpu))
    }

    /// What a waker keeps of its slice with `per_cpu` waiting: the crowd's floor once it has
    /// grown, else 0 (the framework's default, 1 ms, whatever `--slice-us-min`).
    fn crowd_waker_slice_ns(&self, per_cpu: u64) -> u64 {
        let floor_ns = self.crowd_floor_ns(per_cpu);
        if floor_ns > self.settings.slice_min_ns {
            floor_ns
        } else {
            0
        }
    }

    /// A task's own slice: lighter than nice 0 gets a proportionally shorter one, never
    /// below the minimum; heavier gets no more than the common slice (a long slice would
    /// delay everyone else's wakeups). Vtime order alone cannot make weights hold: a task
    /// whose slice ends comes back to the policy while the one waiting behind it already
    /// runs, so two tasks sharing one CPU simply alternate and their slices set the shares.
    fn task_slice_ns(&self, slice_ns: u64, weight: u32) -> u64 {
        let weight = u64::from(weight.max(1)).min(WEIGHT_NICE0);
        (slice_ns * weight / WEIGHT_NICE0).max(self.settings.slice_min_ns)
    }

    /// What an interactive task's wakeups get without asking: a sleeper's full credit (the
    /// place this policy gives it, one slice behind the queue) until it has run one base
    /// slice, when it is handed over and charged. A frame loop or a pipe's reader then
    /// wakes without a round trip through this process; a task that turned into a hog comes
    /// back within a slice, and at the latest when its slice ends (not a wakeup).
    fn wake_grant(&self) -> WakeGrant {
        WakeGrant { budget_ns: self.settings.slice_ns, credit_ns: self.settings.slice_ns }
    }

    /// What running `run_ns` costs a task of `weight` in vruntime: inversely to its weight,
    /// and divided by the boost when it is interactive.
    fn charge_ns(&self, run_ns: u64, weight: u32, interactive: bool) -> u64 {
        let charge_ns = run_ns * WEIGHT_NICE0 / u64::from(weight.max(1));
        if interactive {
            charge_ns / self.settings.slice_boost
        } else {
            charge_ns
        }
    }

    fn forget_old_tasks(&mut self, now_ns: u64) {
        if now_ns < self.forget_at_ns {
            return;
        }
        self.tasks.retain(|_, s| now_ns.saturating_sub(s.last_seen_ns) < FORGET_AFTER_NS);
        self.forget_at_ns = now_ns + FORGET_AFTER_NS;
    }

    fn log_watched(&mut self, task: &QueuedTask, now_ns: u64) {
        if !self.settings.watch.contains(&task.pid) {
            return;
        }
        let Some(state) = self.tasks.get(&task.pid).copied() else { return };
        if now_ns.saturating_sub(state.watch_logged_ns) < 1_000_000_000 {
            return;
        }
        let class = if self.is_interactive(&state) { "interactive" } else { "regular" };
        info!(
            "pid {}: {class} ({:.0} voluntary switches/s, vruntime {} ms ahead of the queue, ran {} us since its last hand-over)",
            task.pid,
            state.nvcsw_rate,
            state.vruntime.saturating_sub(self.min_vruntime) / 1_000_000,
            task.run_ns / 1000
        );
        if let Some(s) = self.tasks.get_mut(&task.pid) {
            s.watch_logged_ns = now_ns;
        }
    }

    /// Whether the task of `pid` is classed interactive now.
    #[cfg(test)]
    fn interactive(&self, pid: i32) -> Option<bool> {
        self.tasks.get(&pid).map(|s| self.is_interactive(s))
    }
}

impl Policy for Rustland {
    fn enqueue(&mut self, task: QueuedTask) {
        let now_ns = monotonic_ns();
        self.forget_old_tasks(now_ns);
        // A task new to the policy (just forked, or unseen for FORGET_AFTER_NS) starts half a
        // slice behind the queue: a command started from a shell then runs before the hogs
        // rather than after every one of them, but after a sleeper back with its whole
        // credit (a frame loop under a stream of build jobs dropped 14% of its frames when
        // new tasks had that credit too).
        let min_vruntime = self.min_vruntime;
        let credit_floor = min_vruntime.saturating_sub(self.settings.slice_ns);
        let new_task_vruntime = min_vruntime.saturating_sub(self.settings.slice_ns / 2);
        let state = self.tasks.entry(task.pid).or_insert_with(|| TaskState::new(new_task_vruntime, task.nvcsw, now_ns));
        state.update_rate(task.nvcsw, now_ns, self.settings.nvcsw_threshold);
        state.last_seen_ns = now_ns;
        let state = *state;
        let interactive = self.is_interactive(&state);
        let charge_ns = self.charge_ns(task.run_ns, task.weight, interactive);
        // A sleeper's credit is at most one slice behind the queue. A task that has slept
        // before its rate is known is at most what it ran since it last slept behind that
        // credit, whatever it ran before: waking, where a grant would put it (wake_grant). A
        // frame loop started beside a build otherwise waited behind the build's jobs while
        // still unclassed, slept less for its late frames, and was classed interactive only
        // after half a second of late frames (one CPU). Once classed, a task keeps its own
        // vruntime: with `--slice-boost 1` an interactive task is charged all it runs.
        let mut vruntime = (state.vruntime + charge_ns).max(credit_floor);
        if state.slept_unclassed(task.nvcsw) {
            let burst_ns = self.charge_ns(task.runtime_since_sleep_ns, task.weight, false);
            vruntime = vruntime.min(credit_floor + burst_ns);
        }
        self.tasks.get_mut(&task.pid).expect("just inserted").vruntime = vruntime;
        self.arrivals += 1;
        self.queue.insert((vruntime, self.arrivals), (task, interactive));
        self.log_watched(&task, now_ns);
    }

    fn dispatch(&mut self, out: &mut Dispatcher) -> usize {
        // The queue's clock is what has started running, not what was handed over: a heavy
        // task's far vtime must not drag the others' credit bound along.
        self.min_vruntime = self.min_vruntime.max(out.vtime_now());
        let per_cpu = self.waiting_per_cpu(out.nr_cpus(), out.nr_queued_in_kernel());
        let slice_ns = self.slice_ns(per_cpu);
        self.waker_slice_ns = self.crowd_waker_slice_ns(per_cpu);
        while let Some(((vruntime, arrival), (task, interactive))) = self.queue.pop_first() {
            let slice_ns = self.task_slice_ns(slice_ns, task.weight);
            let grant = interactive.then(|| self.wake_grant());
            if !out.dispatch(&task, Decision { target: Target::AnyCpu, slice_ns, vtime: vruntime, grant }) {
                self.queue.insert((vruntime, arrival), (task, interactive));
                break;
            }
        }
        self.queue.len()
    }

    fn bypass_slice_ns(&self) -> u64 {
        self.settings.slice_ns
    }

    fn deferred_waker_slice_ns(&self) -> u64 {
        self.waker_slice_ns
    }

    fn clock_runtime_divisor(&self) -> Option<NonZeroU32> {
        NonZeroU32::new(CLOCK_RUNTIME_DIVISOR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn settings(slice_boost: u64) -> Settings {
        Settings { slice_ns: 20 * MS, slice_min_ns: MS, crowd_tasks: 0, nvcsw_threshold: 10.0, slice_boost, watch: vec![] }
    }

    /// A policy that forgets no task: the tests' states carry made-up times.
    fn policy(slice_boost: u64) -> Rustland {
        let mut policy = Rustland::new(settings(slice_boost));
        policy.forget_at_ns = u64::MAX;
        policy
    }

    #[test]
    fn heavier_tasks_are_charged_less_and_run_first() {
        let mut policy = policy(1);
        policy.enqueue(QueuedTask::new(1, 100, 10 * MS, 0));
        policy.enqueue(QueuedTask::new(2, 200, 10 * MS, 0));
        let mut out = Dispatcher::recording(1, KernelView::default());
        assert_eq!(policy.dispatch(&mut out), 0);
        let order: Vec<i32> = out.recorded().iter().map(|d| d.0).collect();
        assert_eq!(order, vec![2, 1], "weight 200 is charged 5 ms, weight 100 10 ms");
    }

    #[test]
    fn weights_hold_when_a_heavy_task_is_handed_over_far_ahead() {
        let mut policy = policy(1);
        policy.enqueue(QueuedTask::new(1, 100, 10 * MS, 0));
        policy.enqueue(QueuedTask::new(2, 1, 10 * MS, 0));
        // Both handed over; the light task (small vtime) is the one that runs.
        let mut out = Dispatcher::recording(1, KernelView { vtime_now: 10 * MS, nr_queued: 1 });
        policy.dispatch(&mut out);
        assert_eq!(out.recorded()[1].3, 1000 * MS, "nice-19-like weight 1: charged 100 times");
        policy.enqueue(QueuedTask::new(1, 100, 10 * MS, 0));
        let mut out = Dispatcher::recording(1, KernelView { vtime_now: 10 * MS, nr_queued: 1 });
        policy.dispatch(&mut out);
        assert_eq!(out.recorded()[0].3, 20 * MS, "not pulled up to the heavy task's vtime");
    }

    #[test]
    fn a_sleeper_brings_back_at_most_one_slice_of_credit() {
        let mut policy = policy(1);
        policy.tasks.insert(7, TaskState::new(0, 0, 0));
        policy.min_vruntime = 1000 * MS;
        policy.enqueue(QueuedTask::new(7, 100, 0, 0));
        let mut out = Dispatcher::recording(1, KernelView::default());
        policy.dispatch(&mut out);
        assert_eq!(out.recorded()[0].3, 980 * MS, "one 20 ms slice behind the queue");
    }

    #[test]
    fn a_new_task_goes_before_the_hogs_that_wait() {
        let mut policy = policy(1);
        policy.tasks.insert(1, TaskState::new(1000 * MS, 0, 0));
        policy.tasks.insert(2, TaskState::new(1005 * MS, 0, 0));
        policy.min_vruntime = 1010 * MS;
        policy.enqueue(QueuedTask::new(1, 100, 10 * MS, 0));
        policy.enqueue(QueuedTask::new(2, 100, 10 * MS, 0));
        policy.enqueue(QueuedTask::new(3, 100, 0, 0));
        let mut out = Dispatcher::recording(1, KernelView::default());
        policy.dispatch(&mut out);
        let order: Vec<i32> = out.recorded().iter().map(|d| d.0).collect();
        assert_eq!(order, vec![3, 1, 2], "the new task at 1000 ms, the hogs at 1010 and 1015");
    }

    #[test]
    fn a_sleeper_back_with_its_credit_goes_before_a_new_task() {
        let mut policy = policy(1);
        policy.tasks.insert(1, TaskState::new(0, 0, 0));
        policy.min_vruntime = 1000 * MS;
        policy.enqueue(QueuedTask::new(2, 100, 0, 0));
        policy.enqueue(QueuedTask::new(1, 100, 0, 0));
        let mut out = Dispatcher::recording(1, KernelView::default());
        policy.dispatch(&mut out);
        let order: Vec<(i32, u64)> = out.recorded().iter().map(|d| (d.0, d.3)).collect();
        assert_eq!(order, vec![(1, 980 * MS), (2, 990 * MS)]);
    }

    #[test]
    fn the_slice_shrinks_as_tasks_wait_but_not_below_the_minimum() {
        let mut policy = policy(1);
        assert_eq!(policy.slice_ns(policy.waiting_per_cpu(2, 0)), 20 * MS);
        for pid in 0..2 {
            policy.enqueue(QueuedTask::new(pid, 100, 0, 0));
        }
        assert_eq!(policy.slice_ns(policy.waiting_per_cpu(2, 2)), 20 * MS / 3, "two waiting per CPU, half of them in the kernel");
        assert_eq!(policy.slice_ns(policy.waiting_per_cpu(2, 400)), MS);
    }

    #[test]
    fn lighter_tasks_get_shorter_slices_heavier_no_longer_ones() {
        let mut policy = policy(1);
        for (pid, weight) in [(1, 100), (2, 50), (3, 1), (4, 1000)] {
            policy.enqueue(QueuedTask::new(pid, weight, 0, 0));
        }
        // Eight CPUs: four waiting tasks do not shrink the common slice.
        let mut out = Dispatcher::recording(8, KernelView::default());
        policy.dispatch(&mut out);
        let slices: HashMap<i32, u64> = out.recorded().iter().map(|d| (d.0, d.2)).collect();
        assert_eq!(slices[&1], 20 * MS);
        assert_eq!(slices[&2], 10 * MS);
        assert_eq!(slices[&3], MS, "nice-19-like weight 1: the minimum");
        assert_eq!(slices[&4], 20 * MS, "heavier: not above the common slice");
    }

    #[test]
    fn interactive_tasks_wakeups_are_granted_hogs_are_not() {
        let mut policy = policy(10);
        let mut sleeper = TaskState::new(0, 0, 0);
        sleeper.nvcsw_rate = 50.0;
        policy.tasks.insert(1, sleeper);
        policy.tasks.insert(2, TaskState::new(0, 0, 0));
        policy.enqueue(QueuedTask::new(1, 100, MS, 0));
        policy.enqueue(QueuedTask::new(2, 100, 10 * MS, 0));
        let mut out = Dispatcher::recording(1, KernelView::default());
        policy.dispatch(&mut out);
        let grants: HashMap<i32, Option<WakeGrant>> = out.recorded_grants().into_iter().collect();
        assert_eq!(grants[&1], Some(WakeGrant { budget_ns: 20 * MS, credit_ns: 20 * MS }), "one slice, a sleeper's credit");
        assert_eq!(grants[&2], None, "a hog's every wakeup is decided");
    }

    #[test]
    fn frequent_sleepers_become_interactive_and_are_charged_less() {
        let mut state = TaskState::new(0, 0, 0);
        for period in 1..=10 {
            state.update_rate(period * 5, period * 100 * MS, 10.0);
        }
        assert!(state.nvcsw_rate > 40.0, "50 switches/s, averaged: {}", state.nvcsw_rate);
        let mut hog = TaskState::new(0, 3, 0);
        for period in 1..=10 {
            hog.update_rate(3, period * 100 * MS, 10.0);
        }
        assert!(hog.nvcsw_rate < 1.0);

        let mut policy = policy(10);
        policy.tasks.insert(1, state);
        policy.tasks.insert(2, hog);
        policy.tasks.get_mut(&1).unwrap().rate_since_ns = u64::MAX / 2;
        policy.tasks.get_mut(&2).unwrap().rate_since_ns = u64::MAX / 2;
        policy.enqueue(QueuedTask::new(1, 100, 10 * MS, 50));
        policy.enqueue(QueuedTask::new(2, 100, 10 * MS, 3));
        assert_eq!(policy.interactive(1), Some(true));
        assert_eq!(policy.interactive(2), Some(false));
        assert_eq!(policy.tasks[&1].vruntime, MS, "10 ms divided by the boost");
        assert_eq!(policy.tasks[&2].vruntime, 10 * MS);
    }

    #[test]
    fn a_new_task_sleeping_at_a_high_rate_is_promoted_before_its_first_period_ends() {
        let mut frame_loop = TaskState::new(0, 0, 0);
        frame_loop.update_rate(1, 17 * MS, 10.0);
        assert_eq!(frame_loop.nvcsw_rate, 0.0, "one sleep tells nothing yet");
        frame_loop.update_rate(2, 33 * MS, 10.0);
        assert_eq!(frame_loop.nvcsw_rate, 20.0, "60 switches/s over 33 ms: seeded at twice the threshold");
        // Later periods are full ones: one quiet period does not demote it...
        frame_loop.update_rate(2, 60 * MS, 10.0);
        assert_eq!(frame_loop.nvcsw_rate, 20.0);
        frame_loop.update_rate(3, 133 * MS, 10.0);
        assert_eq!(frame_loop.nvcsw_rate, 15.0 + 0.25 * 1e9 / (100.0 * MS as f64));

        let mut slow = TaskState::new(0, 0, 0);
        slow.update_rate(2, 60 * MS, 10.0);
        assert_eq!(slow.nvcsw_rate, 0.0, "33 switches/s, under four times the threshold: a full period first");
        slow.update_rate(4, 100 * MS, 10.0);
        assert_eq!(slow.nvcsw_rate, 10.0, "then the average of that period");
    }

    #[test]
    fn a_classed_task_keeps_its_own_vruntime_ahead_of_the_queue() {
        // Without the boost, a sleeper that runs more than its share stays behind the queue
        // it ran ahead of: classed interactive or not, it is charged what it ran.
        let mut policy = policy(1);
        let mut heavy_sleeper = TaskState::new(1050 * MS, 0, u64::MAX / 2);
        heavy_sleeper.nvcsw_rate = 60.0;
        heavy_sleeper.rate_known = true;
        policy.tasks.insert(1, heavy_sleeper);
        policy.min_vruntime = 1000 * MS;
        let mut waking = QueuedTask::new(1, 100, 14 * MS, 5);
        waking.runtime_since_sleep_ns = 0;
        policy.enqueue(waking);
        assert_eq!(policy.tasks[&1].vruntime, 1064 * MS);
    }

    #[test]
    fn a_task_sleeping_before_its_rate_is_known_wakes_with_a_sleepers_credit() {
        let mut policy = policy(10);
        policy.tasks.insert(1, TaskState::new(1004 * MS, 0, u64::MAX / 2));
        policy.tasks.insert(2, TaskState::new(1004 * MS, 0, u64::MAX / 2));
        policy.min_vruntime = 1000 * MS;
        let mut frame_loop = QueuedTask::new(1, 100, 0, 1);
        frame_loop.runtime_since_sleep_ns = 0;
        policy.enqueue(frame_loop);
        assert_eq!(policy.tasks[&1].vruntime, 980 * MS, "slept once: the whole credit");
        policy.enqueue(QueuedTask::new(1, 100, 3 * MS, 1));
        assert_eq!(policy.tasks[&1].vruntime, 983 * MS, "its slice ran out 3 ms after it woke");
        policy.enqueue(QueuedTask::new(2, 100, 0, 0));
        assert_eq!(policy.tasks[&2].vruntime, 1004 * MS, "never slept: its own place");
    }
}
