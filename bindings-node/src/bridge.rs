//! One threadsafe function per JavaScript environment settles every Promise
//! the addon returns.
//!
//! napi-rs's `JsDeferred` creates (and later closes) a threadsafe function —
//! a libuv handle plus an env cleanup hook — for every single Promise. At one
//! call in flight that set-up and tear-down is a measurable share of a round
//! trip (bench/ANALYSIS.md). Here each environment (the main thread, each
//! worker thread) gets one, created on first use:
//!
//! - The runtime's threads queue a boxed settlement on it; the JS thread runs
//!   it with the live env: it builds the value and resolves or rejects.
//! - It is unref'd while nothing is pending, so an idle client never keeps
//!   the process alive, and ref'd while a Promise is pending, so an awaited
//!   call does (as with a per-call threadsafe function).
//! - An env cleanup hook (registered after the threadsafe function, so it
//!   runs before Node finalizes it) closes the channel first: settlements
//!   that arrive after a worker thread ended are dropped, never sent into
//!   freed memory.

use std::cell::RefCell;
use std::ffi::c_void;
use std::future::Future;
use std::ptr;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::{check_status, sys, JsError};

use crate::error::to_js;

/// Work for the JS thread, given the live env.
type Settle = Box<dyn FnOnce(sys::napi_env) + Send>;

/// The environment's threadsafe function as the runtime's threads see it:
/// `None` once the environment is tearing down.
#[derive(Clone)]
struct Channel(Arc<Mutex<Option<RawTsfn>>>);

struct RawTsfn(sys::napi_threadsafe_function);
// SAFETY: napi_call_threadsafe_function may be called from any thread; the
// handle is only used under the channel's lock, which teardown takes before
// letting Node free it.
unsafe impl Send for RawTsfn {}

impl Channel {
    fn send(&self, settle: Settle) {
        let open = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(tsfn) = open.as_ref() else {
            return; // the environment is gone; so is the Promise
        };
        let data = Box::into_raw(Box::new(settle));
        // SAFETY: the handle is open (checked under the lock, which teardown takes before releasing it); `data` is a leaked Box that call_js takes back.
        let status = unsafe {
            sys::napi_call_threadsafe_function(
                tsfn.0,
                data.cast(),
                sys::ThreadsafeFunctionCallMode::nonblocking,
            )
        };
        if status != sys::Status::napi_ok {
            // Closing: it will never run. Free it here.
            // SAFETY: napi refused the call, so call_js will never see `data`: it is still ours, from Box::into_raw above.
            drop(unsafe { Box::from_raw(data) });
        }
    }
}

/// The JS thread's side: the handle and how many Promises are pending.
struct Bridge {
    channel: Channel,
    tsfn: sys::napi_threadsafe_function,
    pending: u64,
}

thread_local! {
    /// One environment per JS thread (the main thread, or one worker thread).
    static BRIDGE: RefCell<Option<Bridge>> = const { RefCell::new(None) };
}

/// A raw deferred, moved to the runtime and back to the JS thread unused.
struct Deferred(sys::napi_deferred);
// SAFETY: only ever dereferenced by napi on the JS thread that created it.
unsafe impl Send for Deferred {}

impl Deferred {
    fn get(&self) -> sys::napi_deferred {
        self.0
    }
}

/// Run `fut` on the core's runtime and settle the returned Promise from
/// there: `convert` builds the JS value on the JS thread; a core error
/// rejects with the coded error object.
///
/// The Promise is typed by what `convert` builds (`PromiseRaw<'env, D>`), so
/// a `#[napi]` method returning it is declared `Promise<D's TypeScript type>`
/// in native.d.ts, checked by the compiler against `convert` (index.d.ts
/// derives `Client` and `Queue` from those declarations).
pub(crate) fn promise<'env, T, D, F, C>(
    env: &'env Env,
    fut: F,
    convert: C,
) -> Result<PromiseRaw<'env, D>>
where
    T: Send + 'static,
    F: Future<Output = echomq::Result<T>> + Send + 'static,
    C: FnOnce(&Env, T) -> Result<D> + Send + 'static,
    D: ToNapiValue + 'static,
{
    let (settle, promise) = pending(env, convert)?;
    echomq::runtime::runtime().spawn(async move {
        // A panic inside the core future rejects with `EMQ_INTERNAL` instead
        // of leaving the Promise (and the pending count) unsettled for ever.
        settle(echomq::runtime::caught(fut).await);
    });
    Ok(PromiseRaw::new(env.raw(), promise))
}

/// As [`promise`], for a one-in-flight verb (an enqueue): the core's caller
/// thread runs it on a connection of its own, awake while calls keep coming,
/// so a call costs the JS thread's wake-up only (`echomq::caller`).
pub(crate) fn promise_direct<'env, T, D, F, Fut, C>(
    env: &'env Env,
    client: &echomq::Client,
    call: F,
    convert: C,
) -> Result<PromiseRaw<'env, D>>
where
    T: Send + 'static,
    F: FnOnce(echomq::Client) -> Fut + Send + 'static,
    Fut: Future<Output = echomq::Result<T>> + Send + 'static,
    C: FnOnce(&Env, T) -> Result<D> + Send + 'static,
    D: ToNapiValue + 'static,
{
    let (settle, promise) = pending(env, convert)?;
    echomq::caller::spawn(client, call, settle);
    Ok(PromiseRaw::new(env.raw(), promise))
}

/// A new Promise and what settles it, from any thread, exactly once.
fn pending<T, D, C>(
    env: &Env,
    convert: C,
) -> Result<(
    impl FnOnce(echomq::Result<T>) + Send + 'static,
    sys::napi_value,
)>
where
    T: Send + 'static,
    C: FnOnce(&Env, T) -> Result<D> + Send + 'static,
    D: ToNapiValue + 'static,
{
    let channel = acquire(env.raw())?;
    let mut deferred = ptr::null_mut();
    let mut promise = ptr::null_mut();
    if let Err(e) =
        // SAFETY: called on the JS thread that owns `env`, with out-pointers to two locals.
        check_status!(unsafe {
            sys::napi_create_promise(env.raw(), &mut deferred, &mut promise)
        })
    {
        release(env.raw());
        return Err(e);
    }
    let deferred = Deferred(deferred);
    let settle = move |outcome: echomq::Result<T>| {
        channel.send(Box::new(move |raw_env| {
            let env = Env::from_raw(raw_env);
            let value = match outcome {
                Ok(value) => {
                    // SAFETY: runs in call_js, on the JS thread, with the live env napi handed it.
                    convert(&env, value).and_then(|d| unsafe { D::to_napi_value(raw_env, d) })
                }
                Err(e) => Err(to_js(&env, &e)),
            };
            // SAFETY: on the JS thread with the live env; `deferred` was created by napi_create_promise for this env and is settled exactly once, here.
            unsafe {
                match value {
                    Ok(value) => sys::napi_resolve_deferred(raw_env, deferred.get(), value),
                    Err(e) => {
                        let reason = JsError::from(e).into_value(raw_env);
                        sys::napi_reject_deferred(raw_env, deferred.get(), reason)
                    }
                };
            }
        }));
    };
    Ok((settle, promise))
}

/// This environment's channel, created on first use; counts one more pending
/// Promise (ref'ing the threadsafe function on the first).
fn acquire(env: sys::napi_env) -> Result<Channel> {
    BRIDGE.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_none() {
            *slot = Some(create(env)?);
        }
        let bridge = slot.as_mut().expect("just created");
        if bridge.pending == 0 {
            // SAFETY: on the JS thread with its live env; `tsfn` was created for this env and is not yet released (teardown clears BRIDGE first).
            check_status!(unsafe { sys::napi_ref_threadsafe_function(env, bridge.tsfn) })?;
        }
        bridge.pending += 1;
        Ok(bridge.channel.clone())
    })
}

fn create(env: sys::napi_env) -> Result<Bridge> {
    let mut name = ptr::null_mut();
    // SAFETY: on the JS thread with its live env; a static NUL-terminated name of the given length and an out-pointer to a local.
    check_status!(unsafe {
        sys::napi_create_string_utf8(env, c"echomq.settle".as_ptr(), 13, &mut name)
    })?;
    let mut tsfn = ptr::null_mut();
    // SAFETY: on the JS thread with its live env; the callbacks are ours and `tsfn` is an out-pointer to a local.
    check_status!(unsafe {
        sys::napi_create_threadsafe_function(
            env,
            ptr::null_mut(),
            ptr::null_mut(),
            name,
            0,
            1,
            ptr::null_mut(),
            None,
            ptr::null_mut(),
            Some(call_js),
            &mut tsfn,
        )
    })?;
    // SAFETY: on the JS thread with its live env, just after creating `tsfn`.
    check_status!(unsafe { sys::napi_unref_threadsafe_function(env, tsfn) })?;
    let channel = Channel(Arc::new(Mutex::new(Some(RawTsfn(tsfn)))));
    let hook = Box::into_raw(Box::new(channel.clone()));
    // SAFETY: on the JS thread with its live env; `hook` is a leaked Box that teardown takes back.
    let status = unsafe { sys::napi_add_env_cleanup_hook(env, Some(teardown), hook.cast()) };
    if status != sys::Status::napi_ok {
        // SAFETY: registration failed, so teardown will never receive `hook`: it is still ours.
        drop(unsafe { Box::from_raw(hook) });
        channel.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        // SAFETY: the threadsafe function was created above and nothing else holds it (the channel was just closed).
        unsafe {
            sys::napi_release_threadsafe_function(tsfn, sys::ThreadsafeFunctionReleaseMode::abort)
        };
        check_status!(status, "register the env cleanup hook")?;
    }
    Ok(Bridge {
        channel,
        tsfn,
        pending: 0,
    })
}

/// Runs on the JS thread for each queued settlement (`env` is null when Node
/// drains the queue during teardown: then only free it).
///
/// # Safety
/// Called by napi only, with the `data` pointer `Channel::send` leaked.
unsafe extern "C" fn call_js(
    env: sys::napi_env,
    _js_callback: sys::napi_value,
    _context: *mut c_void,
    data: *mut c_void,
) {
    // SAFETY: `data` is the Box leaked by Channel::send for this call; napi hands each one to call_js exactly once.
    let settle: Box<Settle> = unsafe { Box::from_raw(data.cast()) };
    if env.is_null() {
        return;
    }
    settle(env);
    release(env);
}

/// One pending Promise fewer; unref the threadsafe function at zero so an
/// idle client does not keep the process alive.
fn release(env: sys::napi_env) {
    BRIDGE.with(|slot| {
        if let Some(bridge) = slot.borrow_mut().as_mut() {
            bridge.pending = bridge.pending.saturating_sub(1);
            if bridge.pending == 0 {
                // SAFETY: on the JS thread with its live env; BRIDGE still holds `tsfn` (teardown clears BRIDGE), so it is not yet released.
                unsafe { sys::napi_unref_threadsafe_function(env, bridge.tsfn) };
            }
        }
    });
}

/// The env cleanup hook: close the channel, then let Node finalize the
/// threadsafe function.
///
/// # Safety
/// Called by napi only, once, with the `Channel` box leaked at registration.
unsafe extern "C" fn teardown(arg: *mut c_void) {
    // SAFETY: `arg` is the Box leaked at registration; napi calls this hook exactly once.
    let channel: Box<Channel> = unsafe { Box::from_raw(arg.cast()) };
    let closing = channel.0.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(tsfn) = closing {
        // SAFETY: the channel was taken under its lock, so no runtime thread can use `tsfn` any more; Node may now free it.
        unsafe {
            sys::napi_release_threadsafe_function(tsfn.0, sys::ThreadsafeFunctionReleaseMode::abort)
        };
    }
    BRIDGE.with(|slot| slot.borrow_mut().take());
}
