use super::*;

fn options(url: &str) -> NatsOptions {
    NatsOptions {
        url: url.to_owned(),
        ..NatsOptions::default()
    }
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aura-access-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_urls_userinfo_is_taken_out_and_becomes_the_credentials() {
    let access = NatsAccess::url("nats://worker:s%40cret@127.0.0.1:4222").unwrap();
    assert_eq!(access.shown(), "nats://127.0.0.1:4222");
    assert_eq!(
        access.credentials,
        Credentials::UserPassword {
            user: "worker".into(),
            password: "s@cret".into()
        }
    );
    // A lone user part is a token, the NATS way.
    let access = NatsAccess::url("nats://t0ken@example.org:4333").unwrap();
    assert_eq!(access.credentials, Credentials::Token("t0ken".into()));
    assert_eq!(access.shown(), "nats://example.org:4333");
    // No port: NATS's own.
    assert_eq!(
        NatsAccess::url("nats://example.org").unwrap().shown(),
        "nats://example.org:4222"
    );
}

#[test]
fn secrets_are_in_no_message_and_no_debug_output() {
    let given = options("nats://worker:hunter2@127.0.0.1:4222,nats://worker:hunter2@10.0.0.2:4222");
    let access = NatsAccess::from_options(&given).unwrap();
    for shown in [
        access.to_string(),
        format!("{access:?}"),
        format!("{given:?}"),
        shown_urls(&given.url),
    ] {
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(!shown.contains("worker:"), "{shown}");
    }
    assert_eq!(access.shown(), "nats://127.0.0.1:4222,nats://10.0.0.2:4222");
    let bad = NatsAccess::url("http://worker:hunter2@127.0.0.1:4222").unwrap_err();
    assert!(!bad.to_string().contains("hunter2"), "{bad}");
    assert!(bad.to_string().contains("not nats:// or tls://"), "{bad}");
    let with_token = options("nats://127.0.0.1:4222");
    let with_token = NatsOptions {
        token: Some("hunter2".into()),
        ..with_token
    };
    assert!(!format!("{with_token:?}").contains("hunter2"));
}

#[test]
fn two_kinds_of_credentials_are_refused_not_merged() {
    let given = NatsOptions {
        token: Some("abc".into()),
        ..options("nats://u:p@127.0.0.1:4222")
    };
    let error = NatsAccess::from_options(&given).unwrap_err();
    assert!(
        matches!(
            error,
            AccessError::TwoCredentials {
                one: "a user and password",
                other: "a token"
            }
        ),
        "{error}"
    );
    // Two servers with different userinfo are two credentials as well.
    let error = NatsAccess::url("nats://a:1@h1:4222,nats://b:2@h2:4222").unwrap_err();
    assert!(
        matches!(error, AccessError::TwoCredentials { .. }),
        "{error}"
    );
    // The same userinfo on each server is one.
    NatsAccess::url("nats://a:1@h1:4222,nats://a:1@h2:4222").unwrap();
    let half = NatsOptions {
        user: Some("worker".into()),
        ..options("nats://127.0.0.1:4222")
    };
    assert!(matches!(
        NatsAccess::from_options(&half).unwrap_err(),
        AccessError::HalfAUser
    ));
}

#[test]
fn an_nkey_seed_file_is_checked_before_any_connection() {
    let pair = nkeys::KeyPair::new_user();
    let seed = pair.seed().unwrap();
    let good = NatsOptions {
        nkey: Some(temp_file("user.nk", &format!("{seed}\n"))),
        ..options("nats://127.0.0.1:4222")
    };
    let access = NatsAccess::from_options(&good).unwrap();
    assert_eq!(access.credentials, Credentials::Nkey(seed.clone()));
    assert!(!format!("{access:?}").contains(&seed));
    let bad = NatsOptions {
        nkey: Some(temp_file("not-a-seed.nk", "SUNOTASEED")),
        ..options("nats://127.0.0.1:4222")
    };
    let error = NatsAccess::from_options(&bad).unwrap_err();
    assert!(error.to_string().contains("not an nkey seed"), "{error}");
    assert!(!error.to_string().contains("SUNOTASEED"), "{error}");
}

#[test]
fn a_file_past_the_bound_is_refused_before_it_is_read_whole() {
    let big = "x".repeat(NATS_CREDENTIALS_BYTES_MAX as usize + 1);
    let given = NatsOptions {
        creds: Some(temp_file("big.creds", &big)),
        ..options("nats://127.0.0.1:4222")
    };
    let error = NatsAccess::from_options(&given).unwrap_err();
    assert!(
        error.to_string().contains("more than 65536 bytes"),
        "{error}"
    );
    let missing = NatsOptions {
        tls_ca: Some(PathBuf::from("/nonexistent/ca.pem")),
        ..options("nats://127.0.0.1:4222")
    };
    let error = NatsAccess::from_options(&missing).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("the TLS CA file /nonexistent/ca.pem"),
        "{error}"
    );
}

#[test]
fn tls_is_required_by_the_scheme_a_ca_a_certificate_or_the_flag() {
    assert!(!NatsAccess::url("nats://h:4222").unwrap().tls_required());
    assert!(NatsAccess::url("tls://h:4222").unwrap().tls_required());
    let ca = temp_file("ca.pem", "-----BEGIN CERTIFICATE-----\n");
    let with_ca = NatsOptions {
        tls_ca: Some(ca.clone()),
        ..options("nats://h:4222")
    };
    assert!(NatsAccess::from_options(&with_ca).unwrap().tls_required());
    let flag = NatsOptions {
        tls: true,
        ..options("nats://h:4222")
    };
    assert!(NatsAccess::from_options(&flag).unwrap().tls_required());
    let half = NatsOptions {
        tls_cert: Some(ca),
        ..options("nats://h:4222")
    };
    assert!(matches!(
        NatsAccess::from_options(&half).unwrap_err(),
        AccessError::HalfACertificate
    ));
}

#[test]
fn a_bare_host_and_port_is_a_nats_url_and_an_empty_one_is_refused() {
    assert_eq!(
        NatsAccess::url("127.0.0.1:4333").unwrap().shown(),
        "nats://127.0.0.1:4333"
    );
    assert!(matches!(
        NatsAccess::url(" , ").unwrap_err(),
        AccessError::Url { .. }
    ));
}

#[test]
fn a_comma_in_a_password_stays_in_its_url_and_is_never_shown() {
    let access = NatsAccess::url("nats://u:pa,ss@h1:4222,nats://u:pa,ss@h2:4222").unwrap();
    assert_eq!(access.shown(), "nats://h1:4222,nats://h2:4222");
    assert_eq!(
        access.credentials,
        Credentials::UserPassword {
            user: "u".into(),
            password: "pa,ss".into()
        }
    );
    for text in ["nats://u:1234,5678@h:4222", "nats://u:pa,ss@h"] {
        let shown = shown_urls(text);
        assert!(!shown.contains("1234") && !shown.contains("pa"), "{shown}");
        if let Err(error) = NatsAccess::url(text) {
            assert!(!error.to_string().contains("pa"), "{error}");
        }
    }
    assert_eq!(split_servers("h1:4222, h2:4222"), ["h1:4222", "h2:4222"]);
}
