//! Work run safely: [`par_map`] over scoped threads (the pages of a document,
//! the object streams to inflate), and the message of a caught panic.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// Stack size of the page workers (pdf-extract recurses into Form XObjects).
const WORKER_STACK: usize = 16 * 1024 * 1024;

/// Maps `f` over `items` on up to `available_parallelism` scoped threads,
/// keeping the input order. A slot is `None` only if its worker died.
pub(crate) fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(usize, &T) -> R + Sync) -> Vec<Option<R>> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len());
    if workers <= 1 {
        return items.iter().enumerate().map(|(i, item)| Some(f(i, item))).collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let work = || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let Ok(result) = catch_unwind(AssertUnwindSafe(|| f(i, item))) else { continue };
                    if let Some(slot) = slots.get(i) {
                        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
                    }
                }
            };
            // If the thread cannot be spawned, the remaining workers (or the
            // sequential pass below) still take every page.
            let _ = std::thread::Builder::new().stack_size(WORKER_STACK).spawn_scoped(scope, work);
        }
    });
    let mut out: Vec<Option<R>> =
        slots.into_iter().map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner)).collect();
    // Pages no worker reached (no thread could be spawned): do them here.
    for (i, slot) in out.iter_mut().enumerate() {
        if slot.is_none()
            && let Some(item) = items.get(i)
            && i >= next.load(Ordering::Relaxed)
        {
            *slot = Some(f(i, item));
        }
    }
    out
}

/// The message a caught panic carries (its `&str` or `String` payload).
pub(crate) fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_map_keeps_input_order() {
        let items: Vec<u32> = (0..100).collect();
        let out = par_map(&items, |i, &x| (i as u32) * 1000 + x * 2);
        let want: Vec<Option<u32>> = (0..100).map(|x| Some(x * 1000 + x * 2)).collect();
        assert_eq!(out, want);
        assert!(par_map(&[] as &[u32], |_, &x| x).is_empty());
    }
}
