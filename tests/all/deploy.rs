//! What can be checked of the container set-up without a container engine: the compose file
//! parses and wires what the binaries read, the image is built the way docs/operations.md says, and the
//! health check command works against a real server.

use serde_yaml::Value;
use std::process::Command;

fn compose() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docker-compose.yml")).unwrap();
    serde_yaml::from_str(&text).expect("docker-compose.yml parses")
}

fn env_names(service: &Value) -> Vec<String> {
    service["environment"]
        .as_mapping()
        .map(|m| m.keys().filter_map(|k| k.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

#[test]
fn compose_runs_the_server_on_postgres_once_it_is_healthy() {
    let c = compose();
    let services = &c["services"];
    let pg = &services["postgres"];
    assert!(pg["image"].as_str().unwrap().starts_with("postgres:"));
    assert!(pg["healthcheck"]["test"].is_sequence());
    assert_eq!(pg["volumes"][0].as_str().unwrap().split(':').next(), Some("pgdata"));
    assert!(c["volumes"]["pgdata"].is_null() || c["volumes"]["pgdata"].is_mapping());
    assert!(c["volumes"].as_mapping().unwrap().contains_key("pgdata"));

    let server = &services["server"];
    assert_eq!(server["build"]["target"], "server");
    assert_eq!(server["depends_on"]["postgres"]["condition"], "service_healthy");
    assert_eq!(server["ports"][0], "3000:3000");
    let url = server["environment"]["DATABASE_URL"].as_str().unwrap();
    assert!(url.starts_with("postgres://") && url.contains("@postgres:5432/"), "{url}");
    assert_eq!(server["environment"]["SLOPEWATCH_BIND"], "0.0.0.0:3000");

    let agent = &services["agent"];
    assert_eq!(agent["profiles"][0], "agent");
    assert_eq!(agent["environment"]["SLOPEWATCH_SERVER"], "http://server:3000");
    assert_eq!(agent["depends_on"]["server"]["condition"], "service_healthy");
}

#[test]
fn every_variable_compose_sets_is_read_by_a_binary() {
    let help = Command::new(env!("CARGO_BIN_EXE_slopewatch")).args(["serve", "--help"]).output().unwrap();
    let server_help = String::from_utf8(help.stdout).unwrap();
    let agent_cli = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/ingest-agent/src/cli.rs")).unwrap();
    let c = compose();
    for name in env_names(&c["services"]["server"]).into_iter().chain(env_names(&c["services"]["server-2"])) {
        if name == "RUST_LOG" {
            continue;
        }
        assert!(server_help.contains(&format!("[env: {name}")), "slopewatch serve does not read {name}");
    }
    for name in env_names(&c["services"]["agent"]) {
        assert!(agent_cli.contains(&format!("env = \"{name}\"")), "slopewatch-agent does not read {name}");
    }
}

#[test]
fn the_image_is_multi_stage_runs_as_a_user_and_checks_its_health() {
    let dockerfile = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Dockerfile")).unwrap();
    let stages: Vec<&str> = dockerfile.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert!(stages.len() >= 3, "{stages:?}");
    for stage in ["AS build", "AS server", "AS agent"] {
        assert!(stages.iter().any(|s| s.ends_with(stage)), "missing stage {stage}");
    }
    assert!(dockerfile.contains("USER slopewatch"));
    assert!(dockerfile.contains("EXPOSE 3000"));
    assert!(dockerfile.contains("HEALTHCHECK") && dockerfile.contains("\"slopewatch\", \"health\""));
    // Everything COPY'd from the context must exist.
    for line in dockerfile.lines().filter(|l| l.starts_with("COPY ") && !l.contains("--from")) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        for src in &parts[1..parts.len() - 1] {
            if *src != "." {
                let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(src);
                assert!(path.exists(), "Dockerfile copies missing {src}");
            }
        }
    }
}

#[test]
fn the_replicas_profile_puts_nginx_in_front_of_two_servers_on_the_same_postgres() {
    let c = compose();
    let services = &c["services"];
    let (one, two, proxy) = (&services["server"], &services["server-2"], &services["proxy"]);
    assert_eq!(two["profiles"][0], "replicas");
    assert_eq!(proxy["profiles"][0], "replicas");
    assert_eq!(two["build"], one["build"], "the second replica is the same image");
    assert_eq!(two["environment"], one["environment"], "the replicas are configured alike");
    assert_eq!(two["depends_on"]["postgres"]["condition"], "service_healthy");
    assert!(two["ports"].is_null(), "the second replica is reached through the proxy only");
    assert!(proxy["image"].as_str().unwrap().starts_with("nginx:"));
    assert_eq!(proxy["volumes"][0], "./deploy/nginx-replicas.conf:/etc/nginx/conf.d/default.conf:ro");
    for replica in ["server", "server-2"] {
        assert_eq!(proxy["depends_on"][replica]["condition"], "service_healthy");
    }
    // One session key for both, made once in a shared volume, and the proxy's fixed address
    // trusted to name the client.
    assert_eq!(two["volumes"], one["volumes"]);
    let mount = one["volumes"][0].as_str().unwrap();
    let (volume, dir) = (mount.split(':').next().unwrap(), mount.split(':').nth(1).unwrap());
    let key_file = one["environment"]["SLOPEWATCH_SESSION_KEY_FILE"].as_str().unwrap();
    assert!(key_file.starts_with(&format!("{dir}/")), "{key_file} is in {mount}");
    let maker = &services["session-key"];
    assert_eq!(maker["volumes"][0].as_str().unwrap().split(':').next(), Some(volume));
    assert!(maker["command"][0].as_str().unwrap().contains(key_file.rsplit('/').next().unwrap()));
    for replica in [one, two] {
        assert_eq!(replica["depends_on"]["session-key"]["condition"], "service_completed_successfully");
    }
    assert_eq!(one["environment"]["SLOPEWATCH_TRUSTED_PROXIES"], proxy["networks"]["default"]["ipv4_address"]);
    let published = proxy["ports"][0].as_str().unwrap();
    assert!(published.ends_with(":3000") && published != "3000:3000", "{published}");

    // The proxy's upstreams are the two services on the port they bind, and it listens where the
    // compose file publishes it.
    let conf = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/nginx-replicas.conf")).unwrap();
    let bind = one["environment"]["SLOPEWATCH_BIND"].as_str().unwrap();
    let port = bind.rsplit(':').next().unwrap();
    for replica in ["server", "server-2"] {
        assert!(conf.contains(&format!("server {replica}:{port} ")), "nginx balances to {replica}:{port}");
    }
    assert!(conf.contains(&format!("listen {};", published.rsplit(':').next().unwrap())));
    assert!(conf.contains("proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;"));
}

#[tokio::test]
async fn the_health_command_passes_for_a_live_server_and_fails_otherwise() {
    let db = crate::helpers::TestDb::new(crate::helpers::Backend::Sqlite).await;
    let app = crate::helpers::TestApp::new(db).await;
    let base = crate::helpers::serve(app.router.clone()).await;
    let bin = env!("CARGO_BIN_EXE_slopewatch");
    let url = format!("{base}/healthz");
    let ok = tokio::task::spawn_blocking(move || Command::new(bin).args(["health", "--url", &url]).output().unwrap())
        .await
        .unwrap();
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));

    let missing = format!("{base}/nope");
    let not_found =
        tokio::task::spawn_blocking(move || Command::new(bin).args(["health", "--url", &missing]).output().unwrap())
            .await
            .unwrap();
    assert!(!not_found.status.success());

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let down = Command::new(bin).args(["health", "--url", &format!("http://{closed}/healthz")]).output().unwrap();
    assert!(!down.status.success());
    assert!(String::from_utf8_lossy(&down.stderr).contains("cannot reach"));
}

/// Every string in a YAML document.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Sequence(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Mapping(map) => map.values().for_each(|v| strings(v, out)),
        Value::Tagged(tagged) => strings(&tagged.value, out),
        _ => {}
    }
}

/// Keys of every `env` or `variables` mapping: what a recipe sets in the environment.
fn environment_keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Sequence(items) => items.iter().for_each(|v| environment_keys(v, out)),
        Value::Mapping(map) => {
            for (k, v) in map {
                if matches!(k.as_str(), Some("env" | "variables")) {
                    out.extend(
                        v.as_mapping().into_iter().flat_map(|m| m.keys()).filter_map(|k| k.as_str().map(String::from)),
                    );
                }
                environment_keys(v, out);
            }
        }
        _ => {}
    }
}

/// Every `slopewatch-agent` command in the recipe's scripts: its words after the program name, up
/// to the end of the command.
fn agent_commands(recipe: &Value) -> Vec<Vec<String>> {
    let mut scripts = Vec::new();
    strings(recipe, &mut scripts);
    let mut commands = Vec::new();
    for script in scripts {
        for line in script.replace("\\\n", " ").lines() {
            // Split as the agent splits a toolchain's command: quotes and backslashes, no expansion.
            let words = slopewatch_agent::config::split_words(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            for (at, _) in words.iter().enumerate().filter(|(_, w)| *w == "slopewatch-agent") {
                let args: Vec<String> = words[at + 1..]
                    .iter()
                    .take_while(|w| !["||", "&&", ";", "|"].contains(&w.as_str()))
                    .cloned()
                    .collect();
                if !args.is_empty() {
                    commands.push(args);
                }
            }
        }
    }
    commands
}

/// The long flags (`--name`) a help text names.
fn long_flags(help: &str) -> std::collections::BTreeSet<String> {
    help.match_indices("--")
        .map(|(at, _)| {
            let name: String = help[at + 2..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
            format!("--{name}")
        })
        .filter(|f| f.len() > 2)
        .collect()
}

const RECIPES: [&str; 2] = ["docs/ci/github-actions.yml", "docs/ci/gitlab-ci.yml"];

#[test]
fn ci_recipes_use_only_flags_and_variables_the_agent_has() {
    use clap::CommandFactory;
    let mut agent = slopewatch_agent::cli::Cli::command();
    let top_help = agent.render_long_help().to_string();
    let mut all_help = top_help.clone();
    for recipe in RECIPES {
        let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(recipe)).unwrap();
        let yaml: Value = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{recipe} does not parse: {e}"));
        let commands = agent_commands(&yaml);
        let mut subcommands = Vec::new();
        for args in &commands {
            let (help, flags) = match args[0].strip_prefix("--") {
                Some(_) => (top_help.clone(), &args[..]),
                None => {
                    let sub = agent
                        .find_subcommand_mut(&args[0])
                        .unwrap_or_else(|| panic!("{recipe}: slopewatch-agent has no command {:?}", args[0]));
                    subcommands.push(args[0].clone());
                    (sub.render_long_help().to_string(), &args[1..])
                }
            };
            all_help.push_str(&help);
            let known = long_flags(&help);
            for flag in flags.iter().filter(|w| w.starts_with("--")) {
                let name = flag.split('=').next().unwrap();
                assert!(known.contains(name), "{recipe}: `slopewatch-agent {}` has no flag {name}", args.join(" "));
            }
        }
        assert!(
            commands.iter().any(|c| c[0] == "check" && c.windows(2).any(|w| w == ["--max-slope", "1.5"])),
            "{recipe} gates with `check --max-slope 1.5`: {commands:?}"
        );
        assert!(subcommands.iter().any(|s| s == "run"), "{recipe} records history with `run`: {commands:?}");
        assert!(
            commands.iter().any(|c| c[0] == "check" && c.iter().any(|w| w.contains("$CROSS_TOOLCHAIN"))),
            "{recipe} gates a target of another architecture: {commands:?}"
        );
        assert!(
            commands.iter().any(|c| c[0] == "exposure" && c.iter().any(|w| w == "--toolchain")),
            "{recipe} scans the release artifact with `exposure --toolchain`: {commands:?}"
        );
        assert!(text.contains("SLOPEWATCH_TOKEN"), "{recipe} passes the token from a secret");
        let mut set = Vec::new();
        environment_keys(&yaml, &mut set);
        for name in set.iter().filter(|n| n.starts_with("SLOPEWATCH_")) {
            assert!(all_help.contains(&format!("[env: {name}")), "{recipe} sets {name}, which the agent does not read");
        }
    }
}

#[test]
fn docs_ci_md_shows_the_recipe_files_as_they_are() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/ci.md")).unwrap();
    let blocks: Vec<&str> = doc.split("```yaml\n").skip(1).map(|b| &b[..b.find("```").unwrap()]).collect();
    for recipe in RECIPES {
        let text = std::fs::read_to_string(root.join(recipe)).unwrap();
        assert!(blocks.contains(&text.as_str()), "docs/ci.md does not show {recipe} as it is");
    }
}
