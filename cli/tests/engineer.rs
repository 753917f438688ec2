//! The engineer flags of `floe train`, `floe experiment` and `floe engineer --ask` (each
//! overrides one field and keeps the rest; a bad value is blamed on its flag), and the raw
//! replies a round keeps when the engineer gives up, against a local server that answers garbage.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

fn floe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_floe")).args(args).output().expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The error message, without the program's name before it.
fn message(o: &Output) -> String {
    stderr(o).trim_start_matches("floe: ").to_string()
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("floe-engineer-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The n-th garbage answer (from 1): prose with quotes and a line break, which a log escapes.
fn garbage(n: usize) -> String {
    format!("Sure! Here is my \"design\" number {n}:\n\tmake the maps harder.")
}

/// A chat-completions server on 127.0.0.1 whose every answer is [`garbage`]; its base URL, and
/// each request's head and body as received.
fn garbage_server() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut head, mut len) = (String::new(), 0);
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
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            let n = {
                let mut log = log.lock().unwrap();
                log.push(format!("{head}\n{}", String::from_utf8_lossy(&body)));
                log.len()
            };
            let completion =
                serde_json::json!({"choices": [{"message": {"content": garbage(n)}}]}).to_string();
            let mut out = stream;
            let _ = out.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{completion}",
                    completion.len()
                )
                .as_bytes(),
            );
        }
    });
    (url, seen)
}

#[test]
fn engineer_flags_are_checked_and_blamed_on_themselves() {
    let ask = |extra: &[&str]| floe(&[&["engineer", "--run", "no-such-run", "--ask"], extra].concat());
    let o = ask(&["--engineer-endpoint", "ftp://example.org/v1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(message(&o).starts_with("--engineer-endpoint ftp://example.org/v1: "), "{}", stderr(&o));
    assert!(stderr(&o).contains("http:// or https://"), "{}", stderr(&o));
    for t in ["0", "-3", "nan", "soon"] {
        let o = ask(&["--engineer-endpoint", "http://127.0.0.1:1/v1", "--engineer-timeout", t]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("--engineer-timeout") && stderr(&o).contains("positive number of seconds"),
            "{}",
            stderr(&o)
        );
    }
    // The default engineer of --ask is the embedded model, which waits on no server.
    let o = ask(&["--engineer-timeout", "5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("only the `endpoint` engineer waits on a server"), "{}", stderr(&o));
    let o = ask(&["--engineer-model", "m"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--engineer-model m: names the model of the `endpoint` engineer"),
        "{}",
        stderr(&o)
    );
    // The default timeout is in the help.
    let help = stdout(&floe(&["engineer", "--help"]));
    assert!(help.contains("--engineer-timeout <SECONDS>") && help.contains("else 120]"), "{help}");
}

#[test]
fn a_round_folder_shows_every_raw_reply_in_order() {
    let d = dir("listing");
    let round = d.join("engineer/round-1");
    std::fs::create_dir_all(&round).unwrap();
    for (f, text) in [
        ("context.md", "the context"),
        ("reply.txt", "all replies"),
        ("reply-1.txt", "first"),
        ("reply-2.txt", "second"),
        ("reply-10.txt", "tenth"),
        ("config.json", "{}"),
        ("rationale.txt", ""),
        ("log.txt", "the log"),
    ] {
        std::fs::write(round.join(f), text).unwrap();
    }
    let o = floe(&["engineer", "--run", s(&d)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let at =
        |section: &str| out.find(&format!("## {section}\n")).unwrap_or_else(|| panic!("{section}:\n{out}"));
    let order = [
        "context.md",
        "reply.txt",
        "reply-1.txt",
        "reply-2.txt",
        "reply-10.txt",
        "config.json",
        "rationale.txt",
        "log.txt",
    ];
    let places: Vec<usize> = order.iter().map(|f| at(f)).collect();
    assert!(places.windows(2).all(|w| w[0] < w[1]), "{out}");
    assert!(out.contains("## reply-10.txt\n\ntenth\n"), "{out}");
}

#[test]
fn ask_needs_the_limits_the_round_was_given() {
    let d = dir("ask-no-limits");
    let round = d.join("engineer/round-1");
    std::fs::create_dir_all(&round).unwrap();
    std::fs::write(round.join("context.md"), "Design the next round.").unwrap();
    let o = floe(&["engineer", "--run", s(&d), "--ask", "--engineer", "rules"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("limits.json") && stderr(&o).contains("--ask needs the context and limits"),
        "{}",
        stderr(&o)
    );
    std::fs::write(round.join("limits.json"), r#"{"agents": []}"#).unwrap();
    let o = floe(&["engineer", "--run", s(&d), "--ask", "--engineer", "rules"]);
    assert!(stderr(&o).contains("agents must be a non-empty list"), "{}", stderr(&o));
}

#[test]
fn ask_keeps_the_params_the_flags_do_not_set_and_shows_the_replies_it_gave_up_on() {
    let d = dir("ask");
    let round = d.join("engineer/round-1");
    std::fs::create_dir_all(&round).unwrap();
    std::fs::write(round.join("context.md"), "Design the next round.").unwrap();
    // What the run's engineer was given: --ask gives the same limits again.
    let limits = r#"{"min_size": 4, "max_size": 7, "agents": [2], "max_hole_ratio": 0.3, "max_sizes": 2, "max_replay_fraction": 0.0}"#;
    std::fs::write(round.join("limits.json"), limits).unwrap();
    let (url, seen) = garbage_server();
    let params = r#"{"base_url": "http://replaced.invalid/v1", "model": "kept-model", "retries": 1,
        "http_retries": 0, "api_key_env": "FLOE_TEST_ASK_KEY", "timeout_s": 999}"#;
    let o = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(["engineer", "--run", s(&d), "--ask", "--engineer-params", params, "--engineer-endpoint", &url])
        .args(["--engineer-timeout", "20"])
        .env("FLOE_TEST_ASK_KEY", "sk-test-456")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no usable configuration in 2 attempt(s)"), "{}", stderr(&o));
    // Both replies it gave up on, as they came.
    let out = stdout(&o);
    assert!(out.contains(&format!("## raw reply 1\n\n{}\n", garbage(1))), "{out}");
    assert!(out.contains(&format!("## raw reply 2\n\n{}\n", garbage(2))), "{out}");
    // `retries`, `model` and `api_key_env` came from --engineer-params, the URL from the flag.
    let requests = seen.lock().unwrap();
    assert_eq!(requests.len(), 2);
    for r in requests.iter() {
        assert!(r.contains("\"model\":\"kept-model\""), "{r}");
        // The reply's schema is the recorded limits'.
        assert!(r.contains("\"size\":{\"type\":\"integer\",\"minimum\":4,\"maximum\":7}"), "{r}");
        assert!(r.to_ascii_lowercase().contains("authorization: bearer sk-test-456"), "{r}");
    }
}

#[cfg(feature = "train")]
mod train {
    use super::*;

    fn print_config(config: &Path, flags: &[&str]) -> Result<serde_json::Value, Output> {
        let o = floe(&[&["train", "--config", s(config), "--print-config"], flags].concat());
        if !o.status.success() {
            return Err(o);
        }
        Ok(serde_json::from_slice(&o.stdout).expect("the configuration as JSON"))
    }

    #[test]
    fn engineer_flags_override_single_fields_of_the_configuration() {
        let d = dir("override");
        let config = d.join("endpoint.json");
        std::fs::write(
            &config,
            r#"{"rounds": {"engineer": {"name": "endpoint", "params": {"base_url": "http://old.invalid/v1",
                "model": "m", "timeout_s": 7, "retries": 5, "api_key_env": "MY_KEY"}}}}"#,
        )
        .unwrap();
        let cfg = print_config(&config, &["--engineer-endpoint", "http://127.0.0.1:9/v1"]).unwrap();
        assert_eq!(
            cfg["rounds"]["engineer"]["params"],
            serde_json::json!({"base_url": "http://127.0.0.1:9/v1", "model": "m", "timeout_s": 7,
                "retries": 5, "api_key_env": "MY_KEY"})
        );
        let cfg = print_config(&config, &["--engineer-model", "big", "--engineer-timeout", "2.5"]).unwrap();
        let p = &cfg["rounds"]["engineer"]["params"];
        assert_eq!((&p["base_url"], &p["model"]), (&"http://old.invalid/v1".into(), &"big".into()));
        assert_eq!(
            (p["timeout_s"].as_f64(), &p["retries"], &p["api_key_env"]),
            (Some(2.5), &5.into(), &"MY_KEY".into())
        );
        // Flags alone: the endpoint engineer's defaults, with the timeout given.
        let empty = d.join("empty.json");
        std::fs::write(&empty, "{}").unwrap();
        let cfg = print_config(
            &empty,
            &["--engineer-endpoint", "http://127.0.0.1:9/v1", "--engineer-timeout", "30"],
        )
        .unwrap();
        assert_eq!(
            cfg["rounds"]["engineer"],
            serde_json::json!({"name": "endpoint", "params": {"base_url": "http://127.0.0.1:9/v1", "model": "default", "timeout_s": 30.0}})
        );
        // A URL the endpoint engineer refuses is the flag's fault, not the file's.
        let o = print_config(&config, &["--engineer-endpoint", "ftp://example.org/v1"]).unwrap_err();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(message(&o).starts_with("--engineer-endpoint ftp://example.org/v1: "), "{}", stderr(&o));
        assert!(!stderr(&o).contains("endpoint.json"), "{}", stderr(&o));
        // The default configuration has no engineer to time.
        let o = print_config(&empty, &["--engineer-timeout", "30"]).unwrap_err();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("the engineer here is none"), "{}", stderr(&o));
        // floe experiment checks the same flags before any work.
        let out = d.join("experiment");
        let o = floe(&["experiment", "--out", s(&out), "--engineer-endpoint", "ftp://example.org/v1"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(message(&o).starts_with("--engineer-endpoint ftp://example.org/v1: "), "{}", stderr(&o));
        let o = floe(&["experiment", "--out", s(&out), "--engineer-timeout", "5"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("the engineer here is `embedded`"), "{}", stderr(&o));
        assert!(!out.exists());
        // One declaration of the flags, under a heading that names the engineer they start from.
        for (cmd, over) in [
            ("train", "over the configuration's `rounds.engineer`"),
            ("experiment", "over the `engineer` contender's embedded model"),
            ("engineer", "with --ask, over --engineer and --engineer-params"),
        ] {
            let help = stdout(&floe(&[cmd, "--help"]));
            assert!(help.contains(&format!("Engineer flags, {over}:")), "{help}");
            for flag in [
                "--engineer-endpoint <URL>",
                "--engineer-model <NAME>",
                "--engineer-timeout <SECONDS>",
                "--engineer-gguf <FILE>",
            ] {
                assert_eq!(help.matches(flag).count(), 1, "{flag}:\n{help}");
            }
            assert!(help.contains("[default: the engineer's, else 120]"), "{help}");
            assert!(help.contains("with its defaults: the key read from $OPENAI_API_KEY"), "{help}");
        }
    }

    /// A configuration that names neither a curriculum nor an engineer is completed by the
    /// engineer flags: `--engineer-endpoint` makes `rounds.engineer` the `endpoint` engineer with
    /// its defaults, `--engineer-gguf` the `embedded` one on that model.
    #[test]
    fn engineer_flags_supply_the_engineer_a_configuration_lacks() {
        let d = dir("supply");
        let config = d.join("neither.json");
        std::fs::write(&config, r#"{"rounds": {"curriculum": null, "engineer": null}}"#).unwrap();
        let cfg = print_config(&config, &["--engineer-endpoint", "http://127.0.0.1:9/v1"])
            .unwrap_or_else(|o| panic!("{}", stderr(&o)));
        assert_eq!(
            cfg["rounds"]["engineer"],
            serde_json::json!({"name": "endpoint", "params": {"base_url": "http://127.0.0.1:9/v1", "model": "default"}})
        );
        assert_eq!(cfg["rounds"]["curriculum"], serde_json::Value::Null);
        let gguf = d.join("model.gguf");
        std::fs::write(&gguf, b"GGUF and then some").unwrap();
        let cfg = print_config(&config, &["--engineer-gguf", s(&gguf)])
            .unwrap_or_else(|o| panic!("{}", stderr(&o)));
        let abs = std::path::absolute(&gguf).unwrap();
        assert_eq!(
            cfg["rounds"]["engineer"],
            serde_json::json!({"name": "embedded", "params": {"model": abs}})
        );
        // Without a flag that names an engineer, the file's fault, named with the file.
        let o = print_config(&config, &[]).unwrap_err();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(message(&o).starts_with(&format!("{}: ", config.display())), "{}", stderr(&o));
        assert!(stderr(&o).contains("name a curriculum, an engineer, or both"), "{}", stderr(&o));
    }

    #[test]
    fn an_engineer_that_answers_garbage_leaves_every_raw_reply_in_the_round_folder() {
        let d = dir("garbage");
        let (url, seen) = garbage_server();
        let config = d.join("tiny.json");
        std::fs::write(
            &config,
            r#"{
              "seed": 3, "threads": 1,
              "model": {"d_model": 16, "layers": 1, "heads": 2, "d_ff": 32, "layout": {"max_side": 6, "max_time": 32}},
              "warm_start": {"samples": 32, "steps": 2, "batch_size": 16, "warmup_steps": 1},
              "grpo": {"group_size": 2, "prompts_per_step": 4},
              "rounds": {"rounds": 2, "epochs": 1, "samples": 16,
                         "engineer": {"name": "endpoint", "params": {"base_url": "http://replaced.invalid/v1",
                                      "model": "m", "retries": 2, "http_retries": 0}}},
              "validation": {"sizes": [3, 4], "agents": [2], "per_cell": 2},
              "eval_batch": 64
            }"#,
        )
        .unwrap();
        let out = d.join("run");
        let o = floe(&[
            "train",
            "--quiet",
            "--config",
            s(&config),
            "--out",
            s(&out),
            "--engineer-endpoint",
            &url,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(seen.lock().unwrap().len(), 3, "retries 2 from the file: three attempts");
        let round = out.join("engineer/round-1");
        let read = |f: &str| std::fs::read_to_string(round.join(f)).unwrap();
        for n in 1..=3 {
            assert_eq!(read(&format!("reply-{n}.txt")), garbage(n));
        }
        assert!(!round.join("reply-4.txt").exists());
        assert!(read("reply.txt").contains(&garbage(3)));
        assert_eq!(read("rationale.txt"), "");
        let log = read("log.txt");
        assert!(
            log.contains("attempt 3: reply 3 refused") && log.contains("the previous configuration stands"),
            "{log}"
        );
        // floe engineer shows them, in order, as they came.
        let o = floe(&["engineer", "--run", s(&out)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let shown = stdout(&o);
        let places: Vec<usize> = (1..=3)
            .map(|n| {
                shown
                    .find(&format!("## reply-{n}.txt\n\n{}\n", garbage(n)))
                    .unwrap_or_else(|| panic!("reply {n}:\n{shown}"))
            })
            .collect();
        assert!(places.windows(2).all(|w| w[0] < w[1]), "{shown}");
    }
}
