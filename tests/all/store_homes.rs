//! A life's homes under the suite every home passes (`aura_day::store::suite`): the fleet's,
//! on a real nats-server's JetStream (the files and memory homes run it in `aura-day`'s own
//! tests).

use std::sync::atomic::{AtomicU64, Ordering};

use aura_fleet::jetstream;
use aura_fleet::life::FleetHome;

use crate::wire::NatsServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jetstream_home_passes_the_suite() {
    let server = NatsServer::start("store-homes");
    let client = async_nats::connect(&server.url).await.unwrap();
    let fleet = jetstream::open(&client).await.unwrap();
    let store = fleet.store();
    // Each home the suite asks for is a life of its own, empty.
    let n = AtomicU64::new(0);
    aura_day::store::suite::conformance(|| {
        let life = format!("suite-{}", n.fetch_add(1, Ordering::Relaxed));
        FleetHome::new(store.clone(), &life).unwrap()
    })
    .await;
}
