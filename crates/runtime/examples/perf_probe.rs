fn main() {
    let mode = if std::env::args().nth(1).as_deref() == Some("line") {
        walksurf::FloorMode::LineTrace
    } else {
        walksurf::FloorMode::Capsule
    };
    let bytes = std::fs::read("/tmp/recast_dungeon.obj.wsurf").unwrap();
    let s = walksurf::Surface::from_bytes(&bytes).unwrap();
    let cfg = walksurf_bake::BakeConfig::default();
    let (mesh, _) =
        walksurf_bake::stage::ingest::ingest(std::path::Path::new("/work/shared/levels/recast_dungeon.obj"), &cfg)
            .unwrap();
    let oracle = walksurf_oracle::Oracle::new(&mesh.vertices, &mesh.triangles).unwrap();
    let cc = walksurf_oracle::corpus::CorpusConfig {
        ground: 2000,
        abnormal: 0,
        ..Default::default()
    };
    let corpus = walksurf_oracle::corpus::generate(&oracle, &mesh.vertices, &mesh.triangles, &cc);
    let mut n = 0;
    for _ in 0..5 {
        for q in &corpus {
            if let walksurf::FloorOutcome::Floor(_) = s.find_floor(q.pos, 47.4, walksurf::Agent::DEFAULT, mode) {
                n += 1;
            }
        }
    }
    println!("{n}");
}
