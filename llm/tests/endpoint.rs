//! The endpoint client against a local HTTP server on 127.0.0.1 that answers, in turn, each kind
//! of bad reply: not JSON, missing fields, values out of range, a timeout, HTTP 429 and 500, a
//! body that breaks off, and finally a good one; and a body too large to read.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use floe_llm::endpoint::{Endpoint, EndpointParams};
use floe_llm::LlmEngineer;
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{EnvEngineer, History, PluginError};
use floe_rounds::context::{ContextInput, ContextOptions};

/// What the server does with one request.
#[derive(Clone)]
enum Answer {
    /// HTTP 200 with a chat completion whose message is this text.
    Content(&'static str),
    /// This status and body.
    Status(u16, &'static str),
    /// Wait this long, then answer with a good completion (too late for the client).
    Slow(Duration),
    /// Declare a longer body than is sent, then close.
    Truncated,
    /// HTTP 200 with a body of 11 MiB, its length declared in the head or not.
    Huge { declared: bool },
}

const GOOD: &str = r#"{"rationale": "more waits on 4x4", "config": {"sizes": [{"size": 3, "data_ratio": 0.25, "hole_ratio": 0.2, "wait_ratio": 0.5}, {"size": 4, "data_ratio": 0.75, "hole_ratio": 0.2, "wait_ratio": 0.7}], "agents": [2]}}"#;

fn completion(content: &str) -> String {
    serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})
        .to_string()
}

/// Serves `script` (one answer per request, in order) and records each request's head and body.
fn serve(script: Vec<Answer>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    thread::spawn(move || {
        for answer in script {
            let Ok((stream, _)) = listener.accept() else { return };
            let log = Arc::clone(&log);
            thread::spawn(move || answer_one(stream, answer, &log));
        }
    });
    (url, seen)
}

fn answer_one(stream: std::net::TcpStream, answer: Answer, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    let mut len = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap();
        }
        head.push_str(&line);
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    log.lock().unwrap().push(format!("{head}\n{}", String::from_utf8_lossy(&body)));
    let mut s = stream;
    let reply = |status: u16, body: &str| {
        format!("HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
    };
    let _ = match answer {
        Answer::Content(c) => s.write_all(reply(200, &completion(c)).as_bytes()),
        Answer::Status(code, body) => s.write_all(reply(code, body).as_bytes()),
        Answer::Slow(d) => {
            thread::sleep(d);
            s.write_all(reply(200, &completion(GOOD)).as_bytes())
        }
        Answer::Truncated => {
            let full = completion(GOOD);
            let head =
                format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", full.len());
            s.write_all(head.as_bytes()).and_then(|()| s.write_all(&full.as_bytes()[..40]))
        }
        Answer::Huge { declared } => {
            let size = 11 << 20;
            let length = if declared { format!("Content-Length: {size}\r\n") } else { String::new() };
            let head = format!("HTTP/1.1 200 OK\r\n{length}Connection: close\r\n\r\n");
            // Until the client hangs up (a write error then ends it).
            let chunk = vec![b' '; 1 << 16];
            s.write_all(head.as_bytes())
                .and_then(|()| (0..size / chunk.len()).try_for_each(|_| s.write_all(&chunk)))
        }
    };
}

fn params(url: &str) -> EndpointParams {
    EndpointParams {
        base_url: url.into(),
        model: "test-model".into(),
        api_key_env: "FLOE_TEST_ENDPOINT_KEY".into(),
        timeout_s: 1.0,
        backoff_ms: 10,
        ..EndpointParams::default()
    }
}

/// The design limits of these tests' context.
fn limits() -> DesignLimits {
    DesignLimits { agents: vec![2], max_replay_fraction: 0.0, ..DesignLimits::default() }
}

fn context() -> String {
    let limits = limits();
    let h = History::default();
    ContextOptions::default()
        .assemble(&ContextInput {
            history: &h,
            round: 1,
            rounds: 2,
            epochs: 1,
            samples: 64,
            previous_rationale: None,
            hyperparameters: serde_json::Value::Null,
            limits: &limits,
        })
        .unwrap()
}

#[test]
fn every_bad_reply_is_survived_and_the_key_stays_secret() {
    // Safety of the environment: this test alone reads this variable.
    std::env::set_var("FLOE_TEST_ENDPOINT_KEY", "sk-secret-123");
    let script = vec![
        Answer::Content("Sure! I would make the maps bigger."), // not JSON
        Answer::Content(r#"{"rationale": "x", "config": {"agents": [2]}}"#), // missing field
        Answer::Slow(Duration::from_millis(2500)),              // timeout
        Answer::Status(429, r#"{"error": "slow down"}"#),
        Answer::Status(500, "oops"),
        Answer::Truncated,
        // out of range: size 9, hole ratio 0.8, agents 4, ratios adding up to 2
        Answer::Content(
            r#"{"rationale": "bigger", "config": {"sizes": [{"size": 9, "data_ratio": 1, "hole_ratio": 0.8, "wait_ratio": 0.5}, {"size": 4, "data_ratio": 1, "hole_ratio": 0.1, "wait_ratio": 0.5}], "agents": [4, 2]}}"#,
        ),
    ];
    let (url, seen) = serve(script);
    let p = EndpointParams { retries: 2, http_retries: 4, ..params(&url) };
    let mut e = LlmEngineer::new(Endpoint::new(p).unwrap(), 2, 0);
    let reply = e.design(&context(), &limits()).unwrap();
    // The third attempt's reply was out of range and is clamped.
    let c = &reply.config;
    assert_eq!(c.sizes[0].size, 6);
    assert_eq!(c.sizes[0].hole_ratio, 0.4);
    assert_eq!(c.sizes[0].data_ratio, 0.5);
    assert_eq!(c.agents, vec![2]);
    c.validate().unwrap();
    let notes = reply.notes.join("\n");
    for want in [
        "attempt 1: reply 1 refused: not a reply object",
        "missing field `sizes`",
        "timed out",
        "HTTP 429",
        "HTTP 500",
        "broke off",
        "clamped: size 9 is outside 3..=6",
    ] {
        assert!(notes.contains(want), "{want:?} not in the notes:\n{notes}");
    }
    assert_eq!(reply.raw.len(), 3);
    assert!(!notes.contains("sk-secret") && !reply.raw.join("").contains("sk-secret"));
    let requests = seen.lock().unwrap();
    assert_eq!(requests.len(), 7);
    assert!(
        requests[0].contains("authorization: Bearer sk-secret-123")
            || requests[0].contains("Authorization: Bearer sk-secret-123"),
        "{}",
        requests[0]
    );
    let body: serde_json::Value = serde_json::from_str(requests[0].split("\n\n").last().unwrap()).unwrap();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(
        body["response_format"]["json_schema"]["schema"]["properties"]["config"]["properties"]["agents"]
            ["items"]["enum"],
        serde_json::json!([2])
    );
}

#[test]
fn gives_up_with_reasons_after_its_retries() {
    let (url, _) =
        serve(vec![Answer::Status(500, "down"), Answer::Status(503, "down"), Answer::Status(401, "no key")]);
    let p = EndpointParams { http_retries: 1, ..params(&url) };
    let mut e = LlmEngineer::new(Endpoint::new(p).unwrap(), 1, 0);
    let err = e.design(&context(), &limits()).unwrap_err().to_string();
    assert!(err.contains("no usable configuration in 2 attempt(s)"), "{err}");
    assert!(err.contains("HTTP 500") && err.contains("HTTP 503") && err.contains("HTTP 401"), "{err}");
}

#[test]
fn an_oversized_body_is_reported_as_too_large_and_not_asked_for_again() {
    for (declared, size) in [(true, "11534336 bytes by its Content-Length"), (false, "longer than that")] {
        let (url, seen) =
            serve(vec![Answer::Huge { declared }, Answer::Content(GOOD), Answer::Content(GOOD)]);
        // Room for every retry, and time to read 10 MiB on a busy machine.
        let p = EndpointParams { http_retries: 3, retries: 2, timeout_s: 30.0, ..params(&url) };
        let mut e = LlmEngineer::new(Endpoint::new(p).unwrap(), 2, 0);
        let err = e.design(&context(), &limits()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("no usable configuration in 1 attempt(s)"), "{text}");
        assert!(text.contains(&format!("the response body is {size}, larger than the 10 MiB")), "{text}");
        assert!(text.contains("none is asked for again") && !text.contains("broke off"), "{text}");
        assert!(matches!(&err, PluginError::NoUsableReply { raw, .. } if raw.is_empty()), "{err:?}");
        // One request, neither retried nor asked again, though good answers were waiting.
        assert_eq!(seen.lock().unwrap().len(), 1, "declared: {declared}");
    }
}

#[test]
fn proposals_pick_the_one_needing_fewest_corrections() {
    // One response with two choices: the first needs clamping, the second does not.
    let two = r#"{"choices": [{"message": {"content": "{\"rationale\": \"a\", \"config\": {\"sizes\": [{\"size\": 12, \"data_ratio\": 1, \"hole_ratio\": 0.2, \"wait_ratio\": 0.5}], \"agents\": [2]}}"}}, {"message": {"content": "{\"rationale\": \"b\", \"config\": {\"sizes\": [{\"size\": 5, \"data_ratio\": 1, \"hole_ratio\": 0.2, \"wait_ratio\": 0.5}], \"agents\": [2]}}"}}]}"#;
    let (url, seen) = serve(vec![Answer::Status(200, two)]);
    let p = EndpointParams { proposals: 2, response_format: false, ..params(&url) };
    let mut e = LlmEngineer::new(Endpoint::new(p).unwrap(), 0, 0);
    let reply = e.design(&context(), &limits()).unwrap();
    assert_eq!(reply.rationale, "b");
    assert_eq!(reply.raw.len(), 2);
    let req = &seen.lock().unwrap()[0];
    assert!(req.contains("\"n\":2") && !req.contains("response_format"), "{req}");
}

#[test]
fn bad_parameters_are_refused() {
    assert!(Endpoint::engineer(r#"{"model": "m"}"#).is_err());
    assert!(Endpoint::engineer(r#"{"base_url": "http://x/v1"}"#).is_err());
    assert!(Endpoint::engineer(r#"{"base_url": "http://x/v1", "model": "m", "no_such": 1}"#).is_err());
    assert!(Endpoint::engineer(r#"{"base_url": "http://x/v1", "model": "m"}"#).is_ok());
}
