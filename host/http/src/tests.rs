use super::*;

#[test]
fn loopback_origins_and_the_allowed_ones_pass_and_no_other() {
    let policy = OriginPolicy::allowing(&["https://app.example.com".into()]).unwrap();
    for allowed in [
        "http://localhost:5173",
        "https://127.0.0.1",
        "http://[::1]:8080",
        "https://app.example.com",
        "https://app.example.com:443",
        "https://APP.example.com",
    ] {
        assert!(policy.allows(allowed), "{allowed}");
    }
    for refused in [
        "http://evil.example",
        // The allowed origin on another scheme or port is another origin (RFC 6454).
        "http://app.example.com",
        "https://app.example.com:8443",
        "https://app.example.com.evil.example",
        "null",
        "not an origin",
        "file:///etc/passwd",
    ] {
        assert!(!policy.allows(refused), "{refused}");
    }
    assert!(!OriginPolicy::default().allows("https://app.example.com"));
}

#[test]
fn an_allowed_origin_that_is_not_one_is_refused_at_start() {
    for bad in ["app.example.com", "https://app.example.com/path", "ftp://x"] {
        let error = OriginPolicy::allowing(&[bad.to_owned()]).unwrap_err();
        assert!(error.to_string().starts_with("--allow-origin "), "{error}");
    }
}

#[test]
fn tls_files_that_are_missing_empty_or_not_a_pair_are_named() {
    let dir = std::env::temp_dir().join(format!("aura-http-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let other = rcgen::KeyPair::generate().unwrap();
    std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
    std::fs::write(dir.join("other-key.pem"), other.serialize_pem()).unwrap();
    std::fs::write(dir.join("empty.pem"), "").unwrap();
    let files = |cert: &str, key: &str| TlsFiles {
        cert: dir.join(cert),
        key: dir.join(key),
    };
    files("cert.pem", "key.pem").acceptor().unwrap();
    let missing = files("none.pem", "key.pem").acceptor().err().unwrap();
    assert!(
        missing.to_string().starts_with("the TLS certificate "),
        "{missing}"
    );
    let empty = files("empty.pem", "key.pem").acceptor().err().unwrap();
    assert!(
        empty.to_string().ends_with("no certificate in it"),
        "{empty}"
    );
    let mismatched = files("cert.pem", "other-key.pem").acceptor().err().unwrap();
    assert!(
        mismatched
            .to_string()
            .starts_with("the TLS certificate and key cannot serve"),
        "{mismatched}"
    );
}
