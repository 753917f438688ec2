//! Threads that each run libtorch with one thread of their own, for the training steps' data
//! parallelism: a step's batch is cut into parts, each part runs forward and backward on one
//! worker through its own handle on the policy ([`crate::Policy::handle`]), and the parts'
//! gradients are summed in part order on the calling thread. With two cores this keeps both
//! busy through a step's many small operations, where libtorch's own parallelism leaves its
//! second OpenMP thread waking and sleeping between them. The sums are taken in one order, so
//! a run stays the same for a seed and a thread count.

use std::sync::mpsc;
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send>;

/// A job for the workers, giving an `R`.
pub type Task<R> = Box<dyn FnOnce() -> R + Send>;

/// A fixed set of worker threads, each with one libtorch thread.
#[derive(Debug)]
pub struct Workers {
    jobs: Vec<mpsc::Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Starts `n` workers (at least one). Returns once each has set its libtorch thread count
    /// to one; libtorch's global count, which new threads copy, and this thread's are then set
    /// to `n`, the run's thread count.
    ///
    /// # Panics
    /// When a worker cannot be started.
    #[must_use]
    pub fn start(n: usize) -> Self {
        let (ready_tx, ready) = mpsc::channel();
        let (mut jobs, mut handles) = (Vec::new(), Vec::new());
        for i in 0..n.max(1) {
            let (job_tx, job_rx) = mpsc::channel::<Job>();
            let ready_tx = ready_tx.clone();
            let handle = std::thread::Builder::new()
                .name(format!("floe-train-{i}"))
                .spawn(move || {
                    // libtorch sets a thread's OpenMP count from its global count at the
                    // thread's first parallel operation (this query counts as one); the count
                    // set after it is the thread's own.
                    let _ = tch::get_num_threads();
                    tch::set_num_threads(1);
                    let _ = ready_tx.send(());
                    drop(ready_tx);
                    for job in job_rx {
                        job();
                    }
                })
                .expect("a training worker thread starts");
            jobs.push(job_tx);
            handles.push(handle);
        }
        drop(ready_tx);
        for _ in 0..jobs.len() {
            ready.recv().expect("a training worker stopped before it was ready");
        }
        tch::set_num_threads(i32::try_from(jobs.len()).unwrap_or(i32::MAX));
        Workers { jobs, threads: handles }
    }

    /// How many workers there are (at least one).
    pub(crate) fn len(&self) -> usize {
        self.jobs.len()
    }

    /// Runs job `i` on worker `i mod n` (in order on each worker) and returns the results in
    /// job order.
    ///
    /// # Panics
    /// When a job panics (the worker's message is printed first) or a worker has stopped.
    pub fn run<R: Send + 'static>(&self, jobs: Vec<Task<R>>) -> Vec<R> {
        let (done_tx, done) = mpsc::channel();
        let count = jobs.len();
        for (i, job) in jobs.into_iter().enumerate() {
            let done_tx = done_tx.clone();
            let job: Job = Box::new(move || {
                let _ = done_tx.send((i, job()));
            });
            self.jobs[i % self.jobs.len()].send(job).expect("a training worker stopped");
        }
        drop(done_tx);
        let mut out: Vec<Option<R>> = (0..count).map(|_| None).collect();
        for _ in 0..count {
            let (i, r) = done.recv().expect("a training worker stopped (its panic is printed above)");
            out[i] = Some(r);
        }
        out.into_iter().map(|r| r.expect("every job answered once")).collect()
    }
}

/// Runs `jobs` on `workers`, or in order on this thread without them.
pub fn run_jobs<R: Send + 'static>(workers: Option<&Workers>, jobs: Vec<Task<R>>) -> Vec<R> {
    match workers {
        Some(w) => w.run(jobs),
        None => jobs.into_iter().map(|job| job()).collect(),
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.jobs.clear();
        for t in self.threads.drain(..) {
            // A worker that panicked has printed its message; the job's caller has panicked too.
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_on_their_workers_with_one_libtorch_thread_and_answer_in_order() {
        let w = Workers::start(2);
        let jobs: Vec<Task<(usize, String, i32)>> = (0..5)
            .map(|i| {
                let job: Task<(usize, String, i32)> = Box::new(move || {
                    let name = std::thread::current().name().unwrap_or("").to_string();
                    (i, name, tch::get_num_threads())
                });
                job
            })
            .collect();
        let out = w.run(jobs);
        for (k, (i, name, threads)) in out.into_iter().enumerate() {
            assert_eq!(i, k);
            assert_eq!(name, format!("floe-train-{}", k % 2));
            assert_eq!(threads, 1);
        }
        assert_eq!(tch::get_num_threads(), 2, "the caller's count is set back");
        assert_eq!(run_jobs(None, vec![Box::new(|| 7) as Task<i32>]), vec![7]);
    }
}
