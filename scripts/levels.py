"""The shared levels and the settings their PROVENANCE.md documents.

Each entry: file name, extra `walksurf bake` / `validate` flags.
"""

LEVELS = [
    ("avian_character_controller_demo.glb", []),
    ("godot_level_mesh.obj", []),
    ("godot_zdm2.glb", []),
    ("landmass_dungeon.glb", []),
    # The default scene holds only a hand-made navmesh; the level is scene 1.
    ("landmass_playground.glb", ["--scene", "1"]),
    ("navcat_bridges.glb", []),
    ("navcat_crowd-simulation-stress-test.glb", []),
    ("navcat_dungeon.gltf", []),
    ("navcat_lowpoly__fps__tdm__game__map_by_resoforge.glb", []),
    ("navcat_nav-test.glb", []),
    ("navcat_proto-level.glb", []),
    # Node "navmesh" is a reference navmesh, not collision.
    ("navcat_tower-big.glb", ["--exclude", "navmesh"]),
    ("recast_dungeon.obj", []),
    ("recast_nav_test.obj", []),
    ("recast_undulating.obj", []),
]
