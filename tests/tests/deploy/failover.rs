//! A replica killed with SIGKILL: HAProxy sends the request that found it
//! gone to another replica (a refused connection never reached a replica,
//! so it is safe to retry) and its health checks take it out of rotation;
//! every call through the balancer keeps succeeding, on the other two.

use std::collections::BTreeSet;

use crate::support::{call, replica, Deployment, Recipe};
use serde_json::json;

#[test]
fn a_killed_replica_is_left_out_and_every_call_still_succeeds() {
    let deployment = Deployment::start(Recipe::default());
    let r1 = libc::pid_t::try_from(deployment.replica_pids[0]).expect("a pid");
    // SAFETY: kill(2) on r1, a process this test's deployment started.
    assert_eq!(unsafe { libc::kill(r1, libc::SIGKILL) }, 0);

    let mut answered = BTreeSet::new();
    for _ in 0..6 {
        let answer = call(
            deployment.addr,
            "notes.search",
            json!({ "query": "failover" }),
            json!({}),
            &[],
        );
        assert_eq!(answer.status, 200, "{}", answer.text());
        let result = &answer.message()["result"];
        assert_eq!(result["isError"], false, "{result}");
        answered.insert(replica(&answer));
    }
    assert_eq!(answered, BTreeSet::from(["r2".to_owned(), "r3".to_owned()]));
}
