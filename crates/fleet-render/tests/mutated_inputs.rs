//! Mutated input never panics anywhere between reading and rendering: fleet.yaml, manifests, overlays and ignore
//! files, each mutated byte by byte, are read, matched against a cluster as `fleet test` matches, and rendered.

use fleet_bundle::tree::MemoryTree;
use fleet_bundle::{ReadOptions, read_bundles};

/// A small deterministic generator (xorshift64*) so the mutation test needs no extra crate and never flakes.
struct Mutator(u64);

impl Mutator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn mutate(&mut self, seed: &[u8]) -> Vec<u8> {
        const ALPHABET: &[u8] = b" \n\t:-[]{}&*!|>'\"%@`#,?.01abzAZ\\/\xff\xc3";
        let mut bytes = seed.to_vec();
        for _ in 0..=(self.next() % 4) {
            let at = (self.next() as usize) % (bytes.len() + 1);
            let byte = ALPHABET[(self.next() as usize) % ALPHABET.len()];
            match self.next() % 3 {
                0 => bytes.insert(at, byte),
                1 if at < bytes.len() => bytes[at] = byte,
                _ if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => bytes.push(byte),
            }
        }
        bytes
    }
}

/// 1,500 mutated fleet.yaml files, manifests, overlays and ignore files: every one is read and rendered
/// to a result or an error, never a panic.
#[test]
fn mutated_inputs_never_panic() {
    let seeds: &[&[u8]] = &[
        b"defaultNamespace: a\ntargetCustomizations:\n- name: x\n  clusterSelector: {matchLabels: {env: dev}}\n  yaml: {overlays: [x]}\n",
        b"helm:\n  chart: ./c\n  values: {a: [1, 2, {b: c}]}\n  valuesFiles: [v.yaml]\ndependsOn: [{name: other}]\n",
        b"overrideTargets: [{clusterGroup: g}]\nrolloutStrategy: {maxUnavailable: 10%}\n",
    ];
    let mut mutator = Mutator(0x9E37_79B9_7F4A_7C15);
    let (mut rendered, mut refused) = (0, 0);
    for round in 0..1500 {
        // One input is mutated per round; the others stay valid so that each mutation is reached.
        let mut inputs: [Vec<u8>; 4] = [
            seeds[round % seeds.len()].to_vec(),
            b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1'}\n".to_vec(),
            b"data: {a: '2'}\n".to_vec(),
            b"*.txt\nscratch/*\n[ab]c?\n".to_vec(),
        ];
        let which = (round / seeds.len()) % inputs.len();
        inputs[which] = mutator.mutate(&inputs[which]);
        let [fleet_yaml, manifest, patch, ignore] = inputs;
        let mut tree = MemoryTree::new();
        tree.add_file("fleet.yaml", fleet_yaml)
            .add_file("cm.yaml", manifest)
            .add_file("overlays/x/cm_patch.yaml", patch)
            .add_file(".fleetignore", ignore)
            .add_file("v.yaml", "a: 1\n")
            .add_file("c/Chart.yaml", "name: c\n")
            .add_file("notes.txt", "x");
        let options = ReadOptions {
            repo_name: "r".to_string(),
            targets: Some(fleet_bundle::TargetsSpec::gitrepo_default()),
            ..ReadOptions::default()
        };
        let Ok(bundles) = read_bundles(&tree, &[], &options) else {
            refused += 1;
            continue;
        };
        {
            for bundle in bundles {
                let cluster = fleet_render::test_cluster::TestCluster {
                    name: "c".into(),
                    labels: [("env".to_string(), "dev".to_string())].into(),
                    group: "default".into(),
                    ..Default::default()
                };
                if let Ok(Some(matched)) =
                    fleet_render::test_cluster::match_cluster(&bundle, &cluster, None)
                    && fleet_render::render(&bundle.spec.resources, &matched.options).is_ok()
                {
                    rendered += 1;
                }
            }
        }
    }
    // The mutations must exercise both the error paths and the full read-match-render path.
    assert!(
        rendered > 100 && refused > 100,
        "rendered {rendered}, refused {refused}"
    );
}
