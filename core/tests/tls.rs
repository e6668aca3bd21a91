//! `rediss://` against a real TLS `redis-server`.
//!
//! Its own test binary because it sets `SSL_CERT_FILE` (process-wide): the
//! client trusts the platform's roots plus that file, the way users point it
//! at a private CA. The certificates are minted per run with the `openssl`
//! command line (a throwaway CA and a leaf for 127.0.0.1).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

mod common;

use echomq::{Client, ConnectOptions, ErrorKind};

const Q: &str = "tls";

fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the openssl command must be installed (apt-get install openssl)");
    assert!(status.success(), "openssl {args:?} failed");
}

/// A CA, and a server certificate it signed for 127.0.0.1.
fn mint_certificates(dir: &Path) {
    std::fs::write(
        dir.join("leaf.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let days = "2";
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            days,
            "-subj",
            "/CN=echomq-test-ca",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            days,
            "-extfile",
            "leaf.cnf",
        ],
    );
}

struct TlsServer {
    port: u16,
    dir: PathBuf,
    child: Child,
}

impl TlsServer {
    fn start() -> TlsServer {
        let dir = std::env::temp_dir().join(format!("emq-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        mint_certificates(&dir);
        let port = common::free_port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                "0",
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(["--tls-port", &port.to_string(), "--tls-auth-clients", "no"])
            .arg("--tls-cert-file")
            .arg(dir.join("server.crt"))
            .arg("--tls-key-file")
            .arg(dir.join("server.key"))
            .arg("--tls-ca-cert-file")
            .arg(dir.join("ca.crt"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (apt-get install redis-server)");
        TlsServer { port, dir, child }
    }

    fn url(&self) -> String {
        format!("rediss://127.0.0.1:{}/", self.port)
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn short_timeouts() -> ConnectOptions {
    ConnectOptions {
        connect_timeout: Duration::from_secs(2),
        response_timeout: Some(Duration::from_secs(2)),
        ..ConnectOptions::default()
    }
}

/// Wait until the TLS port accepts TCP, so each connect below is one try.
fn wait_for_port(port: u16) {
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("TLS redis-server on port {port} did not start");
}

#[tokio::test(flavor = "multi_thread")]
async fn rediss_urls_verify_the_server_and_carry_the_protocol() {
    let server = TlsServer::start();

    // Before the CA is trusted the handshake must fail: typed, not a panic.
    wait_for_port(server.port);
    let untrusted = Client::connect(&server.url(), short_timeouts()).await;
    let Err(err) = untrusted else {
        panic!("an unknown CA must be refused");
    };
    assert_eq!(err.kind(), ErrorKind::Connection, "{err}");
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");

    std::env::set_var("SSL_CERT_FILE", server.dir.join("ca.crt"));
    let client = Client::connect(&server.url(), short_timeouts())
        .await
        .expect("connect over TLS with the CA trusted");
    let enqueued = client
        .enqueue(Q, "over tls", Default::default())
        .await
        .unwrap();
    let job = client.claim(Q, 1000).await.unwrap().unwrap();
    assert_eq!(job.id, enqueued.id);
    assert_eq!(job.payload, b"over tls");
    client
        .complete(Q, job.id.as_str(), job.token)
        .await
        .unwrap();

    // Wire state through an independent TLS client: fenced, and the job is gone.
    let cli = |args: &[&str]| -> String {
        let out = Command::new("redis-cli")
            .args(["--tls", "--cacert"])
            .arg(server.dir.join("ca.crt"))
            .args(["-p", &server.port.to_string(), "--raw"])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    assert_eq!(cli(&["GET", "{emq}:version"]), echomq::PROTOCOL_VERSION);
    assert_eq!(
        cli(&["EXISTS", &format!("emq:{{{Q}}}:job:{}", job.id)]),
        "0"
    );
    assert_eq!(cli(&["ZCARD", &format!("emq:{{{Q}}}:active")]), "0");
}
