//! The server's step split into shards (what `pimhe.distributed` runs on Ray): partial
//! aggregates of shards of unequal sizes, combined in different trees, decrypt to exactly what
//! the one-process aggregate of the same submissions decrypts to; a submission in two shards,
//! too many users together, a lost shard and a partial that lies about its count are refused.

use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::bgv::BgvContext;
use pimhe_workloads::stats::study::{
    combine_shards, evaluate_shard, write_aggregates, Identifier, Overwrite, Study, StudyResult, StudySecret, StudySpec,
};
use pimhe_workloads::stats::Statistic;

const N: usize = 8192;

struct Setup {
    cpu: CpuBackend,
    study: Study,
    secret: StudySecret<BgvContext>,
    public_keys: Vec<u8>,
    /// One named submission per row.
    submissions: Vec<(String, Vec<u8>)>,
}

impl Setup {
    /// A linear regression (sums and sums of products) of two columns over `users` users, at
    /// most `max_users`.
    fn new(users: usize, max_users: usize) -> Self {
        let cpu = CpuBackend::new(Some(2)).unwrap();
        let spec = StudySpec::new(Statistic::Linreg, &["x", "y"], 0, 1000, max_users, N);
        let study = Study::new::<BgvContext>(&spec, Identifier::random(&mut Sampler::from_seed_u64(1))).unwrap();
        let (secret, keys) = study.keygen::<BgvContext, _>(&cpu, Sampler::from_seed_u64(2)).unwrap();
        let submissions = (0..users)
            .map(|u| {
                let row = [(u as i64 * 37) % 1000 - 500, (u as i64 * 91) % 1000 - 400];
                let submission = study
                    .encrypt_row::<BgvContext, _>(&cpu, &keys, &row, Sampler::from_seed_u64(10 + u as u64))
                    .unwrap();
                (format!("user{u}.pimhe"), submission.to_bytes(&cpu).unwrap())
            })
            .collect();
        let public_keys = keys.to_bytes().unwrap();
        Self { cpu, study, secret, public_keys, submissions }
    }

    fn shard(&self, range: std::ops::Range<usize>) -> Result<Vec<u8>, String> {
        evaluate_shard(&self.cpu, &self.study, &self.public_keys, &self.submissions[range]).map_err(|e| e.to_string())
    }

    fn combine(&self, partials: &[&[u8]]) -> Result<Vec<u8>, String> {
        combine_shards(&self.cpu, &self.study, &self.public_keys, partials).map_err(|e| e.to_string())
    }

    /// The statistic of the aggregates bytes.
    fn decrypt(&self, aggregates: &[u8]) -> StudyResult {
        let keys = self.study.keys_from_bytes::<BgvContext>(&self.public_keys).unwrap();
        let aggregates = self.study.aggregates_from_bytes(&self.cpu, &keys, aggregates).unwrap();
        self.study.decrypt::<BgvContext, _>(&self.cpu, &self.secret, &aggregates).unwrap()
    }

    /// The one-process server's aggregates of every submission, as bytes.
    fn one_process(&self) -> Vec<u8> {
        let keys = self.study.keys_from_bytes::<BgvContext>(&self.public_keys).unwrap();
        let loaded: Vec<_> = self
            .submissions
            .iter()
            .map(|(_, bytes)| self.study.submission_from_bytes(&self.cpu, &keys, bytes).unwrap())
            .collect();
        self.study.aggregate::<BgvContext, _>(&self.cpu, &keys, loaded.iter()).unwrap().to_bytes(&self.cpu).unwrap()
    }

    /// `write_aggregates` of `partial` into a fresh file, read back.
    fn written(&self, partial: &[u8], expected: usize) -> Result<Vec<u8>, String> {
        let dir = std::env::temp_dir().join(format!("pimhe-partial-{}-{expected}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("aggregates.pimhe");
        let written =
            write_aggregates(&self.cpu, &self.study, &self.public_keys, partial, expected, &out, Overwrite::Force)
                .map_err(|e| e.to_string());
        let bytes = written.map(|users| {
            assert_eq!(users, expected);
            std::fs::read(&out).unwrap()
        });
        std::fs::remove_dir_all(&dir).unwrap();
        bytes
    }
}

#[test]
fn shards_of_unequal_sizes_in_any_tree_decrypt_to_the_one_process_result() {
    let setup = Setup::new(11, 100);
    let single = setup.decrypt(&setup.one_process());
    assert_eq!(single.users, 11);
    // 11 users in shards of 4, 4 and 3, combined as (0 1) 2 and as 2 (1 0), and all at once.
    let shards: Vec<Vec<u8>> = [0..4, 4..8, 8..11].into_iter().map(|r| setup.shard(r).unwrap()).collect();
    let left = setup.combine(&[&setup.combine(&[&shards[0], &shards[1]]).unwrap(), &shards[2]]).unwrap();
    let right = setup.combine(&[&shards[2], &setup.combine(&[&shards[1], &shards[0]]).unwrap()]).unwrap();
    let flat = setup.combine(&[&shards[0], &shards[1], &shards[2]]).unwrap();
    for partial in [left, right, flat] {
        let result = setup.decrypt(&setup.written(&partial, 11).unwrap());
        assert_eq!(result.users, single.users);
        assert_eq!(result.estimates, single.estimates);
    }
}

#[test]
fn a_submission_in_two_shards_too_many_users_or_a_lost_shard_are_refused() {
    let setup = Setup::new(7, 6);
    // Users 3 and 4 in both shards: refused by identifier when the shards meet.
    let (a, b) = (setup.shard(0..5).unwrap(), setup.shard(3..7).unwrap());
    let message = setup.combine(&[&a, &b]).unwrap_err();
    assert!(message.contains("in two shards"), "{message}");
    // Within a shard, by the names of both files.
    let twice = [setup.submissions[1].clone(), setup.submissions[1].clone()];
    let message = evaluate_shard(&setup.cpu, &setup.study, &setup.public_keys, &twice).unwrap_err().to_string();
    assert!(message.contains("user1.pimhe and user1.pimhe are the same submission"), "{message}");
    // Seven users of a study of at most six, each shard within the bound.
    let (a, b) = (setup.shard(0..4).unwrap(), setup.shard(4..7).unwrap());
    let message = setup.combine(&[&a, &b]).unwrap_err();
    assert!(message.contains("more than the 6 users"), "{message}");
    // A shard lost on the way: the final count is not what was sharded.
    let message = setup.written(&a, 7).unwrap_err();
    assert!(message.contains("hold 4 submissions where 7 were sharded"), "{message}");
    // A partial that is not one: plain aggregates lack the list of submissions.
    let message = setup.combine(&[&setup.written(&a, 4).unwrap()]).unwrap_err();
    assert!(message.contains("entries") || message.contains("submissions"), "{message}");
}
