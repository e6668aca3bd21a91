//! The header drift check, layout tests for every struct C reads, and the
//! boundary rules (null pointers, UTF-8, panics) exercised without a server.
//! Server behaviour is tested from C: ffi-c/tests/c/test_ffi.c.

use std::ffi::{c_char, CStr};
use std::mem::{align_of, offset_of, size_of};
use std::path::PathBuf;
use std::ptr::{null, null_mut};

use crate::guard::{guard, Fail};
use crate::*;

/// Regenerate the header in memory and compare it with include/echomq.h.
/// `EMQ_BLESS=1` rewrites the committed file instead.
#[test]
fn header_matches_sources() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    config.after_includes = Some(version_macros());
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen could not generate the header");
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let path = dir.join("../include/echomq.h");
    if std::env::var("EMQ_BLESS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/echomq.h is out of date with ffi-c/src: regenerate it with \
         `EMQ_BLESS=1 cargo test -p echomq-ffi header` and commit it"
    );
}

/// The `EMQ_VERSION_*` macros, from the workspace version this crate is built
/// with (cbindgen only copies literals, so they are written here): a version
/// bump makes the header drift until it is regenerated, and `emq_version()`
/// answers the same string at run time.
fn version_macros() -> String {
    format!(
        "\n/** The version of this header (the workspace version; `emq_version()` is the\n \
         * library's, and they agree when header and library come from one release). */\n\
         #define EMQ_VERSION \"{}\"\n\
         #define EMQ_VERSION_MAJOR {}\n\
         #define EMQ_VERSION_MINOR {}\n\
         #define EMQ_VERSION_PATCH {}",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
    )
}

/// The header's version macros, `emq_version()` and the Node package's
/// package.json say the workspace version (the wheel takes it from Cargo
/// itself; scripts/test-dist.sh checks every built artefact).
#[test]
fn versions_agree() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(dir.join("../include/echomq.h")).expect("echomq.h");
    let version = env!("CARGO_PKG_VERSION");
    assert!(header.contains(&format!("#define EMQ_VERSION \"{version}\"\n")));
    let parts: Vec<&str> = version.split(['.', '-', '+']).take(3).collect();
    for (name, value) in ["MAJOR", "MINOR", "PATCH"].iter().zip(&parts) {
        assert!(
            header.contains(&format!("#define EMQ_VERSION_{name} {value}\n")),
            "EMQ_VERSION_{name} {value} in the header"
        );
    }
    assert_eq!(text(emq_version()), version);
    let package = std::fs::read_to_string(dir.join("../bindings-node/package.json")).unwrap();
    assert!(
        package.contains(&format!("\n  \"version\": \"{version}\",\n")),
        "bindings-node/package.json does not say \"version\": \"{version}\""
    );
}

/// `layout!(T, size, align, field => offset, ...)`. The same numbers are
/// `_Static_assert`ed by the C test, so both compilers agree on each struct.
macro_rules! layout {
    ($t:ty, $size:expr, $align:expr $(, $field:ident => $off:expr)* $(,)?) => {{
        assert_eq!(size_of::<$t>(), $size, "size_of {}", stringify!($t));
        assert_eq!(align_of::<$t>(), $align, "align_of {}", stringify!($t));
        $( assert_eq!(offset_of!($t, $field), $off, "{}.{}", stringify!($t), stringify!($field)); )*
    }};
}

#[test]
#[cfg(all(target_pointer_width = "64", not(windows)))]
fn struct_layouts_lp64() {
    layout!(emq_error, 80, 8, status => 0, code => 8, message => 16, found => 24, class_word => 32,
        batch => 40, batch_len => 48, last_error => 56, job_id => 64, retry_after_ms => 72);
    layout!(emq_batch_item, 20, 4, id => 0, state => 16);
    layout!(emq_id, 15, 1, text => 0);
    layout!(emq_enqueued, 16, 1, id => 0, duplicate => 15);
    layout!(emq_bytes, 16, 8, data => 0, len => 8);
    layout!(emq_job_ref, 16, 8, id => 0, token => 8);
    layout!(emq_job, 48, 8, id => 0, token => 16, payload => 24, payload_len => 32, attempts => 40);
    layout!(emq_job_list, 16, 8, jobs => 0, len => 8);
    layout!(emq_enqueue_result, 32, 8, status => 0, id => 4, duplicate => 19, error => 24);
    layout!(emq_enqueue_list, 16, 8, items => 0, len => 8);
    layout!(emq_verdict, 16, 8, status => 0, error => 8);
    layout!(emq_verdict_list, 16, 8, items => 0, len => 8);
    layout!(emq_queue_counts, 48, 8, pending => 0, active => 8, scheduled => 16, dead => 24,
        completed => 32, failed => 40);
    layout!(emq_job_info, 64, 8, id => 0, state => 16, attempts => 24, payload => 32,
        payload_len => 40, last_error => 48, progress => 56);
    layout!(emq_time_range, 16, 8, from_ms => 0, to_ms => 8);
    layout!(emq_id_list, 16, 8, ids => 0, len => 8);
    layout!(emq_bundle_mismatch, 24, 8, field => 0, ours => 8, theirs => 16);
    layout!(emq_bundle_mismatch_list, 16, 8, items => 0, len => 8);
    layout!(emq_id_parts, 24, 8, ns => 0, node_id => 4, snowflake => 8, minted_at_ms => 16);
    layout!(emq_key_info, 40, 8, key_class => 0, queue => 8, key_type => 16, id => 24,
        member => 32);
    layout!(emq_connect_options, 80, 8, size => 0, node_id => 8, strict_bundle => 12,
        client_name => 16, connect_timeout_ms => 24, response_timeout_ms => 32, max_payload => 40,
        publish_events => 48, wire_version => 56, wait_replicas => 64, wait_timeout_ms => 72);
    layout!(emq_enqueue_options, 56, 8, size => 0, id => 8, run_at_ms => 16, delay_ms => 24,
        dedup_id => 32, dedup_ttl_ms => 40, priority => 48);
    layout!(emq_worker_event, 64, 8, kind => 0, error_status => 4, name => 8, id => 16,
        token => 24, error => 32, retry_in_ms => 40, duration_ms => 48, count => 56);
    layout!(emq_queue_event, 56, 8, queue => 0, event => 8, job => 16, field_names => 24,
        field_values => 32, field_count => 40, json => 48);
    layout!(emq_worker_options, 128, 8, size => 0, concurrency => 8, backoff => 12,
        lease_ms => 16, max_attempts => 24, backoff_base_ms => 32, backoff_cap_ms => 40,
        pump_interval_ms => 48, idle_max_ms => 56, shutdown_grace_ms => 64,
        prefetch => 72, handler_batch => 80, dead_max_age_ms => 88, dead_max_len => 96,
        max_stalls => 104, keep_result_ms => 112,
        wake_fallback_ms => 120);
    layout!(emq_string_list, 16, 8, items => 0, len => 8);
    layout!(emq_stats, 80, 8, claimed => 0, completed => 8, retried => 16, dead => 24,
        lease_lost => 32, in_flight => 40, claim_failures => 48, heartbeat_failures => 56,
        settle_failures => 64, released => 72);
    // The answer enums keep the int32_t ABI of the typedefs they replaced.
    assert_eq!(size_of::<emq_job_state>(), size_of::<i32>());
    assert_eq!(size_of::<emq_retry_outcome>(), size_of::<i32>());
    assert_eq!(size_of::<emq_key_class>(), size_of::<i32>());
    assert_eq!(size_of::<emq_settled>(), size_of::<i32>());
    assert_eq!(size_of::<emq_worker_event_kind>(), size_of::<i32>());
    assert_eq!(align_of::<emq_job_state>(), align_of::<i32>());
}

#[test]
fn status_numbers_are_the_core_kinds() {
    let ours: Vec<_> = crate::status::KIND_STATUS.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        ours,
        emq_core::ErrorKind::ALL.to_vec(),
        "one entry per kind, in order"
    );
    for (kind, status) in crate::status::KIND_STATUS {
        assert_eq!(status, kind.status(), "{kind:?}");
        let code = unsafe { CStr::from_ptr(emq_status_code(status)) };
        assert_eq!(code.to_str().unwrap(), kind.code());
    }
    for boundary in [EMQ_ERR_NULL_POINTER, EMQ_ERR_INVALID_UTF8, EMQ_ERR_PANIC] {
        assert!(emq_core::ErrorKind::ALL
            .iter()
            .all(|k| k.status() != boundary));
    }
    let unknown = unsafe { CStr::from_ptr(emq_status_code(12345)) };
    assert_eq!(unknown.to_str().unwrap(), "EMQ_UNKNOWN_STATUS");
}

fn text(p: *const c_char) -> String {
    assert!(!p.is_null());
    unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string()
}

#[test]
fn a_panic_becomes_a_status_and_an_error() {
    let mut err = null_mut();
    let status = guard(&mut err, || -> Result<(), Fail> { panic!("boom") });
    assert_eq!(status, EMQ_ERR_PANIC);
    unsafe {
        assert_eq!((*err).status, EMQ_ERR_PANIC);
        assert_eq!(text((*err).code), "EMQ_PANIC");
        assert!(text((*err).message).contains("boom"));
        emq_error_free(err);
    }
    // And a NULL err is fine too.
    assert_eq!(guard(null_mut(), || panic!("quiet")), EMQ_ERR_PANIC);
}

#[test]
fn null_pointers_and_bad_utf8_are_codes() {
    unsafe {
        let mut out = 0u16;
        let mut err = null_mut();
        assert_eq!(
            emq_slot(null(), 3, &mut out, &mut err),
            EMQ_ERR_NULL_POINTER
        );
        assert_eq!(text((*err).code), "EMQ_NULL_POINTER");
        assert!(text((*err).message).contains("key"));
        emq_error_free(err);
        assert_eq!(
            emq_slot(b"x".as_ptr(), 1, null_mut(), null_mut()),
            EMQ_ERR_NULL_POINTER
        );
        // A zero-length NULL is an empty key, not an error.
        assert_eq!(emq_slot(null(), 0, &mut out, null_mut()), EMQ_OK);

        let bad = b"or\xffders\0";
        let mut err = null_mut();
        let status = emq_validate_queue(bad.as_ptr() as *const c_char, &mut err);
        assert_eq!(status, EMQ_ERR_INVALID_UTF8);
        assert_eq!((*err).status, EMQ_ERR_INVALID_UTF8);
        emq_error_free(err);

        // A NULL url is allowed (EMQ_URL, else the local default: test_ffi.c
        // connects that way); a NULL `out` is not.
        let mut err = null_mut();
        assert_eq!(
            emq_connect(null(), null(), null_mut(), &mut err),
            EMQ_ERR_NULL_POINTER
        );
        emq_error_free(err);
        assert_eq!(
            emq_counts(
                null(),
                c"q".as_ptr(),
                &mut emq_queue_counts::default(),
                null_mut()
            ),
            EMQ_ERR_NULL_POINTER
        );
        assert_eq!(emq_worker_stop(null(), null_mut()), EMQ_ERR_NULL_POINTER);
        emq_client_free(null_mut());
        emq_worker_free(null_mut());
        emq_job_free(null_mut());
        emq_error_free(null_mut());
    }
}

/// `emq_enqueue_options` at the boundary, without a server: NULL and the
/// init function give the core's defaults, 0 / NULL fields are "not set",
/// and a bad `size`, unknown non-zero trailing bytes or a non-UTF-8 string
/// are statuses naming the struct, never a crash.
#[test]
fn enqueue_options_at_the_boundary() {
    use crate::client::enqueue_options;
    use emq_core::EnqueueOptions;
    let status = |r: Result<EnqueueOptions, Fail>| match r {
        Ok(_) => EMQ_OK,
        Err(f) => {
            let status = f.status();
            let err = f.into_error();
            let message = unsafe { text((*err).message) };
            unsafe { emq_error_free(err) };
            assert!(message.contains("opts"), "{message}");
            status
        }
    };
    unsafe {
        assert_eq!(
            enqueue_options(null(), "opts").ok(),
            Some(EnqueueOptions::default())
        );
        let mut o = std::mem::zeroed::<emq_enqueue_options>();
        emq_enqueue_options_init(&mut o, size_of::<emq_enqueue_options>());
        assert_eq!(o.size, size_of::<emq_enqueue_options>());
        assert_eq!(
            enqueue_options(&o, "opts").ok(),
            Some(EnqueueOptions::default())
        );
        emq_enqueue_options_init(null_mut(), 48);

        o.id = c"JOB0KHTOWnGLuC".as_ptr();
        o.delay_ms = 500;
        o.dedup_ttl_ms = 7;
        o.priority = 9;
        let core = enqueue_options(&o, "opts").ok().unwrap();
        assert_eq!(
            core,
            EnqueueOptions::default()
                .id("JOB0KHTOWnGLuC")
                .delay_ms(500)
                .dedup_ttl_ms(7)
                .priority(9)
        );

        // priority: 0 is none; the range is the core's check (on the verb),
        // except a value the core's u32 cannot hold (a negative one cast).
        o.priority = 0;
        assert_eq!(enqueue_options(&o, "opts").ok().unwrap().priority, None);
        o.priority = u64::from(EMQ_MAX_PRIORITY) + 1;
        assert_eq!(
            enqueue_options(&o, "opts").ok().unwrap().priority,
            Some(EMQ_MAX_PRIORITY + 1)
        );
        o.priority = -1i64 as u64;
        assert_eq!(
            status(enqueue_options(&o, "opts")),
            EMQ_ERR_INVALID_ARGUMENT
        );
        o.priority = 9;

        // An older, smaller struct (size, id, run_at_ms): the rest are defaults.
        o.size = offset_of!(emq_enqueue_options, delay_ms);
        let core = enqueue_options(&o, "opts").ok().unwrap();
        assert_eq!(core, EnqueueOptions::default().id("JOB0KHTOWnGLuC"));

        // Uninitialised (size 0) or nonsense sizes are refused.
        o.size = 0;
        assert_eq!(
            status(enqueue_options(&o, "opts")),
            EMQ_ERR_INVALID_ARGUMENT
        );
        o.size = 3;
        assert_eq!(
            status(enqueue_options(&o, "opts")),
            EMQ_ERR_INVALID_ARGUMENT
        );

        // A newer, larger struct: accepted while the unknown tail is zero.
        #[repr(C)]
        struct Newer {
            known: emq_enqueue_options,
            future: u64,
        }
        let mut newer = std::mem::zeroed::<Newer>();
        emq_enqueue_options_init(&mut newer.known, size_of::<Newer>());
        assert_eq!(newer.known.size, size_of::<Newer>());
        let p = |n: &Newer| n as *const Newer as *const emq_enqueue_options;
        assert_eq!(status(enqueue_options(p(&newer), "opts")), EMQ_OK);
        newer.future = 3;
        assert_eq!(
            status(enqueue_options(p(&newer), "opts")),
            EMQ_ERR_INVALID_ARGUMENT
        );

        let mut o = std::mem::zeroed::<emq_enqueue_options>();
        emq_enqueue_options_init(&mut o, size_of::<emq_enqueue_options>());
        o.dedup_id = c"or\xffder".as_ptr();
        assert_eq!(status(enqueue_options(&o, "opts")), EMQ_ERR_INVALID_UTF8);

        // The verbs check their handle and out pointers before anything else.
        assert_eq!(
            emq_enqueue(null(), c"q".as_ptr(), null(), 0, &o, null_mut(), null_mut()),
            EMQ_ERR_NULL_POINTER
        );
        assert_eq!(
            emq_enqueue_many(
                null(),
                c"q".as_ptr(),
                null(),
                0,
                null(),
                null_mut(),
                null_mut()
            ),
            EMQ_ERR_NULL_POINTER
        );
    }
}

#[test]
fn pure_helpers() {
    unsafe {
        let mut slot = 0u16;
        let key = b"emq:{orders}:pending";
        assert_eq!(
            emq_slot(key.as_ptr(), key.len(), &mut slot, null_mut()),
            EMQ_OK
        );
        assert_eq!(slot, 105);

        let mut parts = std::mem::zeroed::<emq_id_parts>();
        assert_eq!(
            emq_parse_id(c"USR0KHTOWnGLuC".as_ptr(), &mut parts, null_mut()),
            EMQ_OK
        );
        assert_eq!(text(parts.ns.as_ptr()), "USR");
        assert_eq!(parts.snowflake, 274_557_032_793_636_864);

        let mut id = std::mem::zeroed::<emq_id>();
        assert_eq!(
            emq_encode_id(c"USR".as_ptr(), parts.snowflake, &mut id, null_mut()),
            EMQ_OK
        );
        assert_eq!(text(id.text.as_ptr()), "USR0KHTOWnGLuC");

        let mut err = null_mut();
        assert_eq!(
            emq_parse_id(c"USRzzzzzzzzzzz".as_ptr(), &mut parts, &mut err),
            EMQ_ERR_INVALID_ID
        );
        assert_eq!(text((*err).code), "EMQ_INVALID_ID");
        emq_error_free(err);

        assert_eq!(emq_mint_job_id(7, &mut id, null_mut()), EMQ_OK);
        let mut valid = false;
        assert_eq!(
            emq_is_valid_id(id.text.as_ptr(), &mut valid, null_mut()),
            EMQ_OK
        );
        assert!(valid);
        assert_eq!(
            emq_mint_job_id(1024, &mut id, null_mut()),
            EMQ_ERR_INVALID_ARGUMENT
        );

        let mut key = null_mut();
        assert_eq!(
            emq_queue_key(c"orders".as_ptr(), EMQ_KEY_DEAD, &mut key, null_mut()),
            EMQ_OK
        );
        assert_eq!(text(key), "emq:{orders}:dead");
        emq_string_free(key);
        // The 2.1.0 key types keep their numbers: repeat 6, wake 7.
        for (t, suffix) in [(EMQ_KEY_REPEAT, "repeat"), (EMQ_KEY_WAKE, "wake")] {
            assert_eq!(
                emq_queue_key(c"orders".as_ptr(), t, &mut key, null_mut()),
                EMQ_OK
            );
            assert_eq!(text(key), format!("emq:{{orders}}:{suffix}"));
            emq_string_free(key);
        }
        assert_eq!((EMQ_KEY_REPEAT, EMQ_KEY_WAKE), (6, 7));
        assert_eq!(
            emq_queue_key(c"emq".as_ptr(), EMQ_KEY_DEAD, &mut key, null_mut()),
            EMQ_ERR_INVALID_QUEUE
        );
        assert!(key.is_null());
        assert_eq!(
            emq_queue_key(c"q".as_ptr(), 99, &mut key, null_mut()),
            EMQ_ERR_INVALID_ARGUMENT
        );

        let mut info = null_mut();
        let key = b"{emq}:migration:orders";
        assert_eq!(
            emq_classify(key.as_ptr(), key.len(), &mut info, null_mut()),
            EMQ_OK
        );
        assert_eq!((*info).key_class, EMQ_CLASS_RESERVE);
        assert_eq!(text((*info).member), "migration:orders");
        assert_eq!(text((*info).queue), "orders");
        emq_key_info_free(info);

        assert_eq!(text(emq_protocol_version()), emq_core::PROTOCOL_VERSION);
        let d = emq_worker_options_default();
        assert_eq!(
            (d.concurrency, d.lease_ms, d.backoff),
            (10, 30_000, EMQ_BACKOFF_EXPONENTIAL)
        );
        let c = emq_connect_options_default();
        assert_eq!((c.node_id, c.response_timeout_ms), (-1, 30_000));
    }
}

/// Every verb and helper of docs/API.md has its `emq_` function in the
/// committed header, and the C status numbers there are ours.
#[test]
fn api_parity_with_docs() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let api = std::fs::read_to_string(dir.join("../docs/API.md")).expect("docs/API.md");
    let header = std::fs::read_to_string(dir.join("../include/echomq.h")).expect("echomq.h");
    let declared =
        |name: &str| header.contains(&format!(" {name}(")) || header.contains(&format!("*{name}("));
    let mut section = String::new();
    let mut missing = Vec::new();
    let mut checked = 0;
    // The option tables (`| option | default | range | meaning |`) list
    // options, not verbs: C's are fields of its option structs, which the
    // schema tests compare with the core's options schema.
    let mut in_option_table = false;
    for line in api.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            section = title.trim().to_string();
            continue;
        }
        if line.starts_with("| option | default | range | meaning |") {
            in_option_table = true;
            continue;
        }
        if !line.starts_with('|') {
            in_option_table = false;
        }
        if in_option_table {
            continue;
        }
        let Some(rest) = line.strip_prefix("| `") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let c_name = match (section.as_str(), name.as_str()) {
            // C has no queue handle (docs/API.md says so): it passes the name.
            ("Queue handles", _) | (_, "queue") => continue,
            ("Worker", "Worker") => "emq_worker_new".to_string(),
            ("Worker", verb) => format!("emq_worker_{verb}"),
            // `emq_job` is the claimed-job struct; the verb is emq_get_job.
            (_, "job") => "emq_get_job".to_string(),
            (_, verb) => format!("emq_{verb}"),
        };
        checked += 1;
        if !declared(&c_name) {
            missing.push(format!("{name} ({section}) -> {c_name}"));
        }
    }
    assert!(
        checked >= 40,
        "read only {checked} API lines from docs/API.md"
    );
    assert!(missing.is_empty(), "not in include/echomq.h: {missing:#?}");

    // "`EMQ_ERR_STALE` (2)" in the error table is our constant.
    let mut codes = 0;
    for (kind, status) in crate::status::KIND_STATUS {
        let name = format!("EMQ_ERR_{}", upper_snake(&format!("{kind:?}")));
        assert!(
            api.contains(&format!("`{name}` ({status})")),
            "{name} ({status}) in API.md"
        );
        assert!(
            header.contains(&format!("#define {name} {status}\n")),
            "{name} in header"
        );
        codes += 1;
    }
    assert_eq!(codes, crate::status::KIND_STATUS.len());
}

fn upper_snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// The defaults the header documents are the core's (`echomq::defaults`),
/// and the `*_default()` functions answer exactly those.
#[test]
fn documented_defaults_are_the_cores() {
    use emq_core::defaults as core;
    let w = emq_worker_options_default();
    assert_eq!(w.concurrency as usize, core::CONCURRENCY);
    assert_eq!(w.lease_ms, core::LEASE_MS);
    assert_eq!(w.max_attempts, core::MAX_ATTEMPTS);
    assert_eq!(w.backoff, EMQ_BACKOFF_EXPONENTIAL);
    assert_eq!(
        (w.backoff_base_ms, w.backoff_cap_ms),
        (core::BACKOFF_BASE_MS, core::BACKOFF_CAP_MS)
    );
    assert_eq!(w.pump_interval_ms, core::PUMP_INTERVAL_MS);
    assert_eq!(w.idle_max_ms, core::IDLE_MAX_MS);
    assert_eq!(w.wake_fallback_ms, core::WAKE_FALLBACK_MS);
    assert_eq!(w.shutdown_grace_ms, core::SHUTDOWN_GRACE_MS);
    assert_eq!(w.prefetch, EMQ_PREFETCH_ADAPTIVE);
    assert_eq!(w.handler_batch as usize, core::HANDLER_BATCH);
    let c = emq_connect_options_default();
    assert_eq!(c.node_id, -1);
    assert_eq!(c.connect_timeout_ms, core::CONNECT_TIMEOUT_MS);
    assert_eq!(c.response_timeout_ms, core::RESPONSE_TIMEOUT_MS);
    assert_eq!(c.max_payload as usize, core::MAX_PAYLOAD);
    let header = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../include/echomq.h"),
    )
    .unwrap();
    let documented = [
        format!(
            "concurrency {}, lease {} ms, {} attempts",
            core::CONCURRENCY,
            core::LEASE_MS,
            core::MAX_ATTEMPTS
        ),
        format!(
            "exponential {}..{} ms, pumps every {} ms, idle poll {} ms, grace {} ms",
            core::BACKOFF_BASE_MS,
            core::BACKOFF_CAP_MS,
            core::PUMP_INTERVAL_MS,
            core::IDLE_MAX_MS,
            core::SHUTDOWN_GRACE_MS
        ),
        format!(
            "{} / {} ms, 16 MiB",
            core::CONNECT_TIMEOUT_MS,
            core::RESPONSE_TIMEOUT_MS
        ),
    ];
    let flat = header.split_whitespace().collect::<Vec<_>>().join(" ");
    for text in documented {
        assert!(flat.contains(&text), "the header documents {text:?}");
    }
}

/// include/echomq.hpp keeps up with the C ABI: every function of the header is
/// used by the wrapper (bar the by-value `*_default()`, which it replaces with
/// `*_init`), and every `EMQ_ERR_*` status has its exception class, its `case`
/// in `detail::raise` and a check in ffi-c/tests/c/test_cpp.cpp.
#[test]
fn cpp_wrapper_covers_the_header() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(dir.join(p)).expect(p);
    let (header, hpp, test) = (
        read("../include/echomq.h"),
        read("../include/echomq.hpp"),
        read("tests/c/test_cpp.cpp"),
    );
    let uses = |name: &str| {
        hpp.match_indices(name).any(|(at, _)| {
            let next = hpp[at + name.len()..].chars().next();
            !matches!(next, Some(c) if c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let mut functions = Vec::new();
    for line in header.lines() {
        // cbindgen starts every declaration `ret name(` at column 0.
        if !line.starts_with(|c: char| c.is_ascii_alphabetic()) || line.starts_with("typedef") {
            continue;
        }
        let Some((head, _)) = line.split_once('(') else {
            continue;
        };
        let name = head.rsplit([' ', '*']).next().unwrap_or("");
        if name.starts_with("emq_") {
            functions.push(name.to_string());
        }
    }
    assert!(
        functions.len() >= 60,
        "read only {} functions",
        functions.len()
    );
    let unwrapped: Vec<_> = functions
        .iter()
        .filter(|f| !f.ends_with("_options_default") && !uses(f))
        .collect();
    assert!(
        unwrapped.is_empty(),
        "not used by include/echomq.hpp: {unwrapped:#?}"
    );

    let mut statuses = 0;
    for line in header.lines() {
        let Some(rest) = line.strip_prefix("#define EMQ_ERR_") else {
            continue;
        };
        let name = format!("EMQ_ERR_{}", rest.split(' ').next().unwrap());
        statuses += 1;
        assert!(
            hpp.contains(&format!("case {name}: ")),
            "{name}: no case in raise()"
        );
        assert!(
            hpp.contains(&format!(", {name})")) || hpp.contains(&format!("kStatus = {name};")),
            "{name}: no exception class in echomq.hpp"
        );
        assert!(
            test.contains(&format!(">({name}))")),
            "{name}: not checked in test_cpp.cpp"
        );
    }
    assert!(statuses >= 21, "read only {statuses} statuses");
}
