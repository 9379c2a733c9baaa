//! Headless Chromium driven over its DevTools protocol on a pipe (`--remote-debugging-pipe`: JSON
//! messages ended by a NUL byte, read from fd 3 and written to fd 4), for what a DOM dump cannot
//! say: where the page laid elements out in a window of a given size. Only `sh` and the browser.

use base64::Engine;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// One browser tab of a fixed size.
pub struct Tab {
    child: Child,
    to: ChildStdin,
    from: BufReader<ChildStdout>,
    next_id: u64,
    session: String,
    _profile: tempfile::TempDir,
}

impl Tab {
    /// A tab of `width`×`height` CSS pixels in a fresh headless `browser`.
    pub fn open(browser: &Path, (width, height): (u32, u32)) -> Tab {
        let profile = tempfile::tempdir().unwrap();
        // The shell hands our pipes to the browser as the fds the protocol uses: its stdin
        // becomes fd 3 (what it reads), its stdout fd 4 (what it writes).
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 </dev/null >/dev/null"#)
            .arg(browser)
            .args(super::chromium::HEADLESS)
            .arg("--remote-debugging-pipe")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("--window-size={width},{height}"))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let to = child.stdin.take().unwrap();
        let from = BufReader::new(child.stdout.take().unwrap());
        let mut tab = Tab { child, to, from, next_id: 0, session: String::new(), _profile: profile };
        let target = tab.call("Target.createTarget", json!({"url": "about:blank"}));
        let target = target["targetId"].as_str().unwrap().to_string();
        let attached = tab.call("Target.attachToTarget", json!({"targetId": target, "flatten": true}));
        tab.session = attached["sessionId"].as_str().unwrap().to_string();
        let metrics = json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false});
        tab.call("Emulation.setDeviceMetricsOverride", metrics);
        tab
    }

    /// Sends `method` (to the tab once attached) and answers its result; events are skipped.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            message["sessionId"] = self.session.clone().into();
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap();
        self.to.flush().unwrap();
        loop {
            let mut raw = Vec::new();
            let read = self.from.read_until(0, &mut raw).unwrap();
            assert!(read > 0, "the browser closed its DevTools pipe during {method}");
            raw.pop();
            let answer: Value = serde_json::from_slice(&raw).unwrap();
            if answer["id"].as_u64() == Some(id) {
                assert!(answer.get("error").is_none(), "{method}: {answer}");
                return answer["result"].clone();
            }
        }
    }

    /// Loads `url` and waits until it and its style sheets and scripts have loaded.
    pub fn goto(&mut self, url: &str) {
        let navigated = self.call("Page.navigate", json!({"url": url}));
        assert!(navigated.get("errorText").is_none(), "{url}: {navigated}");
        let deadline = Instant::now() + Duration::from_secs(30);
        let loaded = format!("location.href === {} && document.readyState === 'complete'", json!(url));
        while self.eval(&loaded) != json!(true) {
            assert!(Instant::now() < deadline, "{url} did not load");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The value of a JavaScript expression in the page (JSON-serialisable values only).
    pub fn eval(&mut self, expression: &str) -> Value {
        let answer = self.call("Runtime.evaluate", json!({"expression": expression, "returnByValue": true}));
        assert!(answer.get("exceptionDetails").is_none(), "{expression}: {answer}");
        answer["result"]["value"].clone()
    }

    /// What the tab's window shows, as a PNG in `file`.
    pub fn screenshot(&mut self, file: &Path) {
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = base64::engine::general_purpose::STANDARD.decode(shot["data"].as_str().unwrap()).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{} is a real screenshot", file.display());
        std::fs::write(file, png).unwrap();
    }
}

impl Drop for Tab {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
