import numpy as np

from app.cjk import segment_for_index
from app.index.retrieval import fuse
from app.index.terms import index_form, keyword_terms, match_expression, selective_terms
from app.index.vectors import VectorIndex


def test_rrf_rewards_agreement_between_lists() -> None:
    fused = fuse([[1, 2, 3], [3, 1, 4]], k=60)
    assert [item for item, _ in fused] == [1, 3, 2, 4]
    assert fused[0][1] == 1 / 61 + 1 / 62


def test_rrf_of_one_list_keeps_its_order() -> None:
    assert [i for i, _ in fuse([[5, 4, 3]])] == [5, 4, 3]


def test_keyword_terms_drop_stopwords_and_bigram_chinese() -> None:
    assert keyword_terms("What does section 3 say about retention?") == [
        "section",
        "3",
        "retention",
    ]
    assert keyword_terms("员工档案要保存多久？") == [
        "员工",
        "工档",
        "档案",
        "案要",
        "要保",
        "保存",
        "存多",
        "多久",
    ]


def test_match_expression_quotes_terms() -> None:
    assert match_expression(keyword_terms('the "quoted" term')) == '"quoted" OR "term"'
    assert match_expression(keyword_terms("what is the")) is None


def test_the_rarest_terms_that_fit_the_postings_budget_are_kept_in_query_order() -> None:
    frequency = {"data": 90_000, "policy": 15_000, "retention": 4_000, "audit": 900}
    terms = ["data", "retention", "policy", "audit"]
    assert selective_terms(terms, frequency) == ["retention", "policy", "audit"]
    assert selective_terms(["data", "policy"], frequency) == ["policy"]  # the rarest, always
    assert selective_terms(["unknown", "data", "policy"], frequency) == ["unknown", "policy"]
    small = {"data": 90, "retention": 40, "audit": 9}
    assert selective_terms(list(small), small) == list(small)


def test_index_form_matches_the_unicode61_vocabulary() -> None:
    assert [index_form(w) for w in ["Café", "NAÏVE", "Straße", "员工"]] == [
        "cafe",
        "naive",
        "straße",
        "员工",
    ]


def test_index_segmentation_matches_query_terms() -> None:
    indexed = segment_for_index("员工档案必须保存十年").split()
    assert set(keyword_terms("保存十年")) <= set(indexed)


def test_vector_index_search_filter_and_remove() -> None:
    index = VectorIndex()
    vectors = np.eye(4, dtype=np.float32)
    index.add([10, 11], [1, 1], vectors[:2])
    index.add([12, 13], [2, 2], vectors[2:])
    query = np.array([0.1, 0.9, 0.8, 0], dtype=np.float32)
    assert [chunk for chunk, _ in index.search(query, 2)] == [11, 12]
    assert [chunk for chunk, _ in index.search(query, 4, document_ids=[2])] == [12, 13]
    index.remove_document(1)
    assert len(index) == 2
    assert [chunk for chunk, _ in index.search(query, 4)] == [12, 13]
