"""The dataset registry: every dataset's raw files (URL, sha256), builder and published size.

Sizes are after cleaning (undirected, simple, isolated nodes kept) and are checked by
``tests/data/test_registry.py``. Sources: each raw file's public URL and the mirror's MANIFEST.tsv
(URL, sha256, size per file).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from graphpriv.data import builders
from graphpriv.data.fetch import RawFile
from graphpriv.data.graph import RawGraph

_FILES = {
    "seal/USAir.mat": RawFile("seal", "USAir.mat",
        "https://raw.githubusercontent.com/muhanzhang/SEAL/master/MATLAB/data/USAir.mat",
        "6b48a37e2bb398234e5383787c30dca087de704366a2b7b05d64cc2f53210e0b"),
    "seal/PB.mat": RawFile("seal", "PB.mat",
        "https://raw.githubusercontent.com/muhanzhang/SEAL/master/MATLAB/data/PB.mat",
        "c0eca0a3b5bac0ecd46491c2a1e080ec22e445d28f9975bc776dc07b3d672d88"),
    "seal/Yeast.mat": RawFile("seal", "Yeast.mat",
        "https://raw.githubusercontent.com/muhanzhang/SEAL/master/MATLAB/data/Yeast.mat",
        "2d199acffa6cecd9dfd0d13f0c4eaecd34158e83f1a717e5da7e38089692e112"),
    "seal/Celegans.mat": RawFile("seal", "Celegans.mat",
        "https://raw.githubusercontent.com/muhanzhang/SEAL/master/MATLAB/data/Celegans.mat",
        "450bb6f3ca833a65f53ee59103945ef87da70de2c6d262b1a760b9eefce287d6"),
    "seal/facebook.mat": RawFile("seal", "facebook.mat",
        "https://raw.githubusercontent.com/muhanzhang/SEAL/master/MATLAB/data/facebook.mat",
        "0775e6d3739445de0112b74d7dd843c67dac34d53a216b204981a415507abf9f"),
    "planetoid/ind.cora.x": RawFile("planetoid", "ind.cora.x",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.cora.x",
        "23cfa55d91c6f624233f5eb7b6e3f141f1bd2b2ae39608a63cf5d084bb27baab"),
    "planetoid/ind.cora.tx": RawFile("planetoid", "ind.cora.tx",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.cora.tx",
        "b9afbaa4a400df991f6f02ef677e1e44da55ffc04801fd02f9e673987829226a"),
    "planetoid/ind.cora.allx": RawFile("planetoid", "ind.cora.allx",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.cora.allx",
        "9419ba2f26f5c35243db64aba110e0f35a04851609e0dc5433450676ca6b8543"),
    "planetoid/ind.cora.y": RawFile("planetoid", "ind.cora.y",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.cora.y",
        "94465c14eb53e04ca262198dcbb2521ee8af60fb3f3d546cd6ca24a511b0e7d1"),
    "planetoid/ind.cora.ty": RawFile("planetoid", "ind.cora.ty",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.cora.ty",
        "41f5ac76596a1699cc33f53084a2419e92961c42bb75f36fc38e616d348532ad"),
    "planetoid/ind.cora.ally": RawFile("planetoid", "ind.cora.ally",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.cora.ally",
        "2b998f5cc7fedc86e7f97ca2498f47a1ffc1462c29e2d578b23bf3f62b6e7d71"),
    "planetoid/ind.cora.graph": RawFile("planetoid", "ind.cora.graph",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.cora.graph",
        "58f13302f39dde8852dad6fe6d15b89b077b6d7f837626bce671ef80344b383d"),
    "planetoid/ind.cora.test.index": RawFile("planetoid", "ind.cora.test.index",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.cora.test.index",
        "297ce89af2b51a6a194181c7dbe1796c6a1cf9cd9349a88383b1b1e227867875"),
    "planetoid/ind.citeseer.x": RawFile("planetoid", "ind.citeseer.x",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.citeseer.x",
        "d20de19150741e555de0ed037195630fc194114ebc7fd72ced62810148aa22f6"),
    "planetoid/ind.citeseer.tx": RawFile("planetoid", "ind.citeseer.tx",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.citeseer.tx",
        "539a8906a2da97628d212f2fdd668c109a8b3f0d36574b59e5d3fd5b5303da21"),
    "planetoid/ind.citeseer.allx": RawFile("planetoid", "ind.citeseer.allx",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.citeseer.allx",
        "2ac30345d95c9ec933a817ee0bdd6a5f077f8c184a20e696910192d534414668"),
    "planetoid/ind.citeseer.y": RawFile("planetoid", "ind.citeseer.y",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.citeseer.y",
        "8ba87e515d8e3ee3cf52f6d2c5b86aa73f11ecad825a808455209ec26cd54924"),
    "planetoid/ind.citeseer.ty": RawFile("planetoid", "ind.citeseer.ty",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.citeseer.ty",
        "55e5bd1ba1e733a04598753ad1a8d57957f4b8f89e74519f41f4f4938767e4ce"),
    "planetoid/ind.citeseer.ally": RawFile("planetoid", "ind.citeseer.ally",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.citeseer.ally",
        "f704b2d986dde6c2669934de1f3ae5696a6cf9455c0f6b2646a2d135ea0a1c95"),
    "planetoid/ind.citeseer.graph": RawFile("planetoid", "ind.citeseer.graph",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.citeseer.graph",
        "d79a4ef9d3e7169aee8946145f6b7306e35bc79bffad26346cfb94e10e9912a7"),
    "planetoid/ind.citeseer.test.index": RawFile("planetoid", "ind.citeseer.test.index",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.citeseer.test.index",
        "2af990671580b6b2df5d158d1038f8292e30c9cd821b5453f399659b25b723d4"),
    "planetoid/ind.pubmed.x": RawFile("planetoid", "ind.pubmed.x",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.pubmed.x",
        "fbe9cb5c47200d1b7769a26e579be3b7130b556831f9d850e77c4c74f2599b33"),
    "planetoid/ind.pubmed.tx": RawFile("planetoid", "ind.pubmed.tx",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.pubmed.tx",
        "4eb5f5d0f30f26497eb0ac6ac9719d09c67e284f1ed0385c93f3ef27a671da3d"),
    "planetoid/ind.pubmed.y": RawFile("planetoid", "ind.pubmed.y",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.pubmed.y",
        "e6c807633307a07ed659249006536a147c7999c797f11a2560752990181b41b3"),
    "planetoid/ind.pubmed.ty": RawFile("planetoid", "ind.pubmed.ty",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.pubmed.ty",
        "ee2e0d4819d9fbcc403689c3bf2e49face401b605932f093bc58ab6461130fdd"),
    "planetoid/ind.pubmed.ally": RawFile("planetoid", "ind.pubmed.ally",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.pubmed.ally",
        "0c37bbe3b5014ec365e9d393cf4791925e5ed94fb194305d74f064a8d7b50f0e"),
    "planetoid/ind.pubmed.graph": RawFile("planetoid", "ind.pubmed.graph",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.pubmed.graph",
        "5b89f0036ca22909471f1e6558eb42fa06e0c730a577bde5b058b40638f81dc9"),
    "planetoid/ind.pubmed.test.index": RawFile("planetoid", "ind.pubmed.test.index",
        "https://github.com/kimiyoung/planetoid/raw/master/data/ind.pubmed.test.index",
        "b101d421688bbaecbd82e8a18f1e282378d6830f3a37666f28ebc47f844341b5"),
    "nettack/polblogs.npz": RawFile("nettack", "polblogs.npz",
        "https://raw.githubusercontent.com/danielzuegner/nettack/master/data/polblogs.npz",
        "cd0983c2b1caa3bbe2703a4e316f97bb1dccd33f98800d3d8e4bbe51cc86941b"),
    "dpar/cora_ml.npz": RawFile("dpar", "cora_ml.npz",
        "https://github.com/Emory-AIMS/DPAR/raw/master/data/cora_ml.npz",
        "e3439bfd32c4a962d5c56a4f313793baee39181c208c90a3915b61183d3e1cda"),
    "feather/lastfm_asia_edges.csv": RawFile("feather", "lastfm_asia_edges.csv",
        "https://raw.githubusercontent.com/benedekrozemberczki/FEATHER/master/new_node_level_dataset/edges/lastfm_asia_edges.csv",
        "548eacff61bff564ab5007831fa4a7a30e1a3956075ffd24e43310ed33555842"),
    "feather/lastfm_asia_target.csv": RawFile("feather", "lastfm_asia_target.csv",
        "https://raw.githubusercontent.com/benedekrozemberczki/FEATHER/master/new_node_level_dataset/target/lastfm_asia_target.csv",
        "91f19215f6eca8321feec038bd32900cf13fd4f7e041a9976cf202807c72ac16"),
    "feather/deezer_gendered_edges.csv": RawFile("feather", "deezer_gendered_edges.csv",
        "https://raw.githubusercontent.com/benedekrozemberczki/FEATHER/master/new_node_level_dataset/edges/deezer_gendered_edges.csv",
        "a4aabf57e3eb20d40d5df7c7d15142b20656d9ca8f77a083106c1ee81226e530"),
    "feather/deezer_gendered_target.csv": RawFile("feather", "deezer_gendered_target.csv",
        "https://raw.githubusercontent.com/benedekrozemberczki/FEATHER/master/new_node_level_dataset/target/deezer_gendered_target.csv",
        "9d5c5736e1d55361e9caa5ae4f96ea5f40c3a70a8cfaad332defac9d84c6b2c6"),
    "privdpr/Processed_p2p.txt": RawFile("privdpr", "Processed_p2p.txt",
        "https://raw.githubusercontent.com/sunnerzs/PrivDPR/master/ProcessedData/Processed_p2p.txt",
        "196141ade9bee884b2507f943a491260e1b3e6dfdc0e853e8707e8ad2f8372e1"),
    "privdpr/Processed_chicago.txt": RawFile("privdpr", "Processed_chicago.txt",
        "https://raw.githubusercontent.com/sunnerzs/PrivDPR/master/ProcessedData/Processed_chicago.txt",
        "9d3b694ed0f1953ba8bb23bad7d42448ad4355ea05bfb1c1dbe724ee580a1bb4"),
    "privdpr/Processed_cora.txt": RawFile("privdpr", "Processed_cora.txt",
        "https://raw.githubusercontent.com/sunnerzs/PrivDPR/master/ProcessedData/Processed_cora.txt",
        "e285cac7126a8f535098c278ba497e5e21dcb4938976b979bc3b695ceacf7010"),
    "privdpr/Processed_citeseer.txt": RawFile("privdpr", "Processed_citeseer.txt",
        "https://raw.githubusercontent.com/sunnerzs/PrivDPR/master/ProcessedData/Processed_citeseer.txt",
        "020a11c489c87e11d12b9c2b0a548cc13610a3b039e630b74d4e644c35cbdb42"),
    "facebook100/Amherst41.mat": RawFile("facebook100", "Amherst41.mat",
        "https://raw.githubusercontent.com/sisaman/pyg-datasets/main/datasets/facebook100/Amherst41.mat",
        "3108e4b2edb01be05c5a61147583a40e61012820fff7eebe621dd26018caaf00"),
    "facebook100/Caltech36.mat": RawFile("facebook100", "Caltech36.mat",
        "https://raw.githubusercontent.com/sisaman/pyg-datasets/main/datasets/facebook100/Caltech36.mat",
        "597d8307f9aaaaf50343e12a22893c203c52b92e1dd5b3fb35e13f19871d6ffa"),
    "facebook100/Cornell5.mat": RawFile("facebook100", "Cornell5.mat",
        "https://raw.githubusercontent.com/sisaman/pyg-datasets/main/datasets/facebook100/Cornell5.mat",
        "d9ff76ae34e855cb77b0779a3a320f7f73f848901cb13352e2734c17804c4aec"),
    "facebook100/Harvard1.mat": RawFile("facebook100", "Harvard1.mat",
        "https://raw.githubusercontent.com/sisaman/pyg-datasets/main/datasets/facebook100/Harvard1.mat",
        "1b066bceed71bfe94c11c118bf4a46fbbe5f41b838b7c93c2a5b8afc9a70a460"),
    "facebook100/JohnsHopkins55.mat": RawFile("facebook100", "JohnsHopkins55.mat",
        "https://raw.githubusercontent.com/sisaman/pyg-datasets/main/datasets/facebook100/JohnsHopkins55.mat",
        "fc7243bf257155df03afbc397ab34b5f8eb8e75f40cd1603398e207a033ef50f"),
    "facebook100/MIT8.mat": RawFile("facebook100", "MIT8.mat",
        "https://raw.githubusercontent.com/sisaman/pyg-datasets/main/datasets/facebook100/MIT8.mat",
        "ad4a4614ba42c6f85bcc6025331dd7b0059d4eab3cdd8ec6d86ded07aaa0b63b"),
}


@dataclass(frozen=True)
class DatasetSpec:
    """One registry dataset.

    Attributes:
        id: graphpriv's name. files: keys of ``_FILES`` it needs. build: paths -> RawGraph.
        num_nodes, num_edges: size after cleaning (undirected edges counted once).
        num_features, num_classes: 0 when absent. description: provenance, one line.
    """

    id: str
    files: tuple[str, ...]
    build: Callable[..., RawGraph]
    num_nodes: int
    num_edges: int
    num_features: int
    num_classes: int
    description: str

    @property
    def raw_files(self) -> list[RawFile]:
        """The RawFile entries (URL, sha256) of this dataset."""
        return [_FILES[f] for f in self.files]


def _planetoid(name: str, parts: tuple[str, ...]) -> tuple[tuple[str, ...], Callable[..., RawGraph]]:
    return tuple(f"planetoid/ind.{name}.{p}" for p in parts), partial(builders.planetoid, prefix=name)


_PLANETOID_ALL = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")
_PUBMED = ("graph", "ty", "ally", "test.index")

_SPECS = [
    DatasetSpec("usair", ("seal/USAir.mat",), builders.seal_mat, 332, 2126, 0, 0,
                "US air transportation network (SEAL's USAir.mat)"),
    DatasetSpec("pb", ("seal/PB.mat",), builders.seal_mat, 1222, 16714, 0, 0,
                "political blogs (SEAL's PB.mat)"),
    DatasetSpec("yeast", ("seal/Yeast.mat",), builders.seal_mat, 2375, 11693, 0, 0,
                "yeast protein-protein interactions (SEAL's Yeast.mat)"),
    DatasetSpec("celegans", ("seal/Celegans.mat",), builders.seal_mat, 297, 2148, 0, 0,
                "C. elegans neural network (SEAL's Celegans.mat)"),
    DatasetSpec("facebook", ("seal/facebook.mat",), builders.seal_mat, 4039, 88234, 0, 0,
                "Facebook ego networks, SNAP (SEAL's facebook.mat)"),
    DatasetSpec("cora", *_planetoid("cora", _PLANETOID_ALL), 2708, 5278, 1433, 7,
                "Cora citation graph, Planetoid raw files"),
    DatasetSpec("citeseer", *_planetoid("citeseer", _PLANETOID_ALL), 3327, 4552, 3703, 6,
                "CiteSeer citation graph, Planetoid raw files (isolated nodes kept)"),
    DatasetSpec("pubmed", *_planetoid("pubmed", _PUBMED), 19717, 44324, 0, 3,
                "PubMed diabetes citation graph, structure and labels only (allx not mirrored)"),
    DatasetSpec("pubmed_partial", tuple(f"planetoid/ind.pubmed.{p}" for p in ("x", "tx", *_PUBMED)),
                partial(builders.planetoid_partial_features, prefix="pubmed"), 19717, 44324, 501, 3,
                "PubMed with the features the mirror has: 1,060 nodes' TF-IDF rows (x, tx), zeros elsewhere, "
                "and a has-features bit"),
    DatasetSpec("polblogs", ("nettack/polblogs.npz",), builders.nettack_npz, 1490, 16715, 0, 2,
                "political blogs, Nettack's npz (19,025 directed arcs)"),
    DatasetSpec("lastfm_asia", ("feather/lastfm_asia_edges.csv", "feather/lastfm_asia_target.csv"),
                builders.feather, 7624, 27806, 0, 18, "LastFM Asia social network (FEATHER)"),
    DatasetSpec("lastfm_asia_identity", ("feather/lastfm_asia_edges.csv", "feather/lastfm_asia_target.csv"),
                builders.feather_identity, 7624, 27806, 7624, 18,
                "LastFM Asia with one-hot identity features (a function of the node index only), for DPAR"),
    DatasetSpec("deezer_europe",
                ("feather/deezer_gendered_edges.csv", "feather/deezer_gendered_target.csv"),
                builders.feather, 28281, 92752, 0, 2, "Deezer Europe social network (FEATHER)"),
    DatasetSpec("cora_ml", ("dpar/cora_ml.npz",), builders.dpar_npz, 2995, 8158, 2879, 7,
                "Cora-ML citation graph (DPAR/G2G npz)"),
    DatasetSpec("p2p_gnutella08", ("privdpr/Processed_p2p.txt",), builders.privdpr_txt, 6301, 20777,
                0, 0, "Gnutella P2P network, 2002-08-08 (PrivDPR's processed file)"),
    DatasetSpec("chicago", ("privdpr/Processed_chicago.txt",), builders.privdpr_txt, 12979, 20627,
                0, 0, "Chicago road/transport network (PrivDPR's processed file)"),
    DatasetSpec("cora_privdpr", ("privdpr/Processed_cora.txt",), builders.privdpr_txt, 2708, 5278,
                0, 0, "Cora structure as preprocessed by PrivDPR"),
    DatasetSpec("citeseer_privdpr", ("privdpr/Processed_citeseer.txt",), builders.privdpr_txt,
                3327, 4552, 0, 0, "CiteSeer structure as preprocessed by PrivDPR"),
    DatasetSpec("fb100-caltech36", ("facebook100/Caltech36.mat",), builders.facebook100_mat, 655, 14837, 76, 6,
                "Facebook100 Caltech36: friendships, one-hot attributes, class year (GAP's Facebook collection)"),
    DatasetSpec("fb100-amherst41", ("facebook100/Amherst41.mat",), builders.facebook100_mat, 2021, 81492, 100, 6,
                "Facebook100 Amherst41: friendships, one-hot attributes, class year (GAP's Facebook collection)"),
    DatasetSpec("fb100-jhu55", ("facebook100/JohnsHopkins55.mat",), builders.facebook100_mat, 4544, 164787, 248, 6,
                "Facebook100 JohnsHopkins55: friendships, one-hot attributes, class year (GAP's Facebook collection)"),
    DatasetSpec("fb100-mit8", ("facebook100/MIT8.mat",), builders.facebook100_mat, 5298, 217118, 156, 7,
                "Facebook100 MIT8: friendships, one-hot attributes, class year (GAP's Facebook collection)"),
    DatasetSpec("fb100-harvard1", ("facebook100/Harvard1.mat",), builders.facebook100_mat, 12505, 729471, 168, 9,
                "Facebook100 Harvard1: friendships, one-hot attributes, class year (GAP's Facebook collection)"),
    DatasetSpec("fb100-cornell5", ("facebook100/Cornell5.mat",), builders.facebook100_mat, 16162, 669883, 347, 6,
                "Facebook100 Cornell5: friendships, one-hot attributes, class year (GAP's Facebook collection)"),
]

REGISTRY: dict[str, DatasetSpec] = {spec.id: spec for spec in _SPECS}
