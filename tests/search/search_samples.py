"""A small feature space shared by the search tests: 4 places x 4 prices x 3 tones x 3 noises."""

from stellar.features import parse_feature_space

SPACE = parse_feature_space(
    {
        "features": [
            {"name": "place", "kind": "content", "values": ["bar", "cafe", "hotel", "museum"]},
            {"name": "price", "kind": "content", "ordinal": True, "values": [1, 2, 3, 4]},
            {"name": "tone", "kind": "style", "values": ["rude", "plain", "polite"]},
            {"name": "noise", "kind": "perturbation", "values": ["none", "typos", "fillers"]},
        ]
    }
)
