import numpy as np
import pytest

from app.cjk import segment_for_index
from app.index import vectors as vectors_module
from app.index.retrieval import Passage, fuse, rerank
from app.index.store import StoredChunk
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


def test_vector_search_is_exactly_the_float32_scan_whatever_the_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The int8 first pass may only prune rows that provably cannot make the top k."""
    monkeypatch.setattr(vectors_module, "_QUANTIZE_BLOCK", 700)  # batches span several blocks
    rng = np.random.default_rng(7)
    isotropic = rng.standard_normal((3000, 64))
    # Real embeddings crowd into a cone (e5's cosines mostly sit between 0.7 and 0.9), which
    # packs many rows within the int8 error of the k-th best: the hard case for pruning.
    crowded = rng.standard_normal(64) * 4 + rng.standard_normal((3000, 64))
    for vectors in (isotropic, crowded):
        vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
        documents = np.arange(len(vectors)) % 7
        index = VectorIndex()
        index.add(list(range(100, 2100)), documents[:2000].tolist(), vectors[:2000])
        index.add(list(range(2100, 3100)), documents[2000:].tolist(), vectors[2000:])
        for query in vectors[rng.choice(len(vectors), 20)] + rng.normal(0, 0.3, (20, 64)):
            query = (query / np.linalg.norm(query)).astype(np.float32)
            exact = vectors @ query
            for scope in (None, [3], [0, 5]):
                allowed = np.isin(documents, scope) if scope else np.ones(len(vectors), bool)
                best = np.sort(exact[allowed])[::-1][:25]
                found = index.search(query, 25, document_ids=scope)
                rows = np.array([chunk - 100 for chunk, _ in found])
                similarities = np.array([similarity for _, similarity in found])
                # Compared by score: equal scores (there are some) may come in either order.
                assert len(set(rows)) == len(rows)
                assert allowed[rows].all()
                assert np.allclose(similarities, exact[rows], atol=1e-6)
                assert np.allclose(similarities, best, atol=1e-6)


def test_vector_search_with_fewer_rows_in_scope_than_asked_for() -> None:
    index = VectorIndex()
    index.add([1, 2, 3], [1, 2, 2], np.eye(3, dtype=np.float32))
    query = np.array([0.6, 0.8, 0], dtype=np.float32)
    assert [chunk for chunk, _ in index.search(query, 10, document_ids=[2])] == [2, 3]
    assert [chunk for chunk, _ in index.search(query, 10, document_ids=[9])] == []
    assert [chunk for chunk, _ in index.search(query, 10)] == [2, 1, 3]


def _candidate(number: int, heading: str, text: str, score: float) -> Passage:
    chunk = StoredChunk(
        id=number,
        document_id=1,
        document_path="/library/HISTORY.md",
        document_title="HISTORY",
        ordinal=number,
        page=number,
        page_label=str(number),
        heading=heading,
        text=text,
    )
    return Passage(
        chunk=chunk, score=score, keyword_rank=number, vector_rank=number, similarity=0.9
    )


def test_reranking_moves_up_the_passage_holding_the_questions_rare_word_or_value() -> None:
    # Every candidate says the common words; fusion ranked the one with the rare one third.
    docs = [
        _candidate(1, "six.moves", "Python 3 function names in six.moves: input, range.", 0.033),
        _candidate(
            2, "six.moves", "The six.moves function table for Python 3: reduce, zip.", 0.032
        ),
        _candidate(3, "six.moves", "six.moves, Python 3: getoutput maps to subprocess.", 0.031),
    ]
    by_word = rerank("Which Python 3 function does six.moves.getoutput map to?", docs)
    assert [p.chunk.id for p in by_word] == [3, 1, 2]
    changelog = [
        _candidate(1, "2.29.0", "Support for urllib3 1.26 was added.", 0.033),
        _candidate(2, "2.28.0", "Support for urllib3 was improved.", 0.032),
        _candidate(3, "2.30.0", "Added support for urllib3 2.0.", 0.031),
    ]
    by_value = rerank("Which release added support for urllib3 2.0?", changelog)
    assert by_value[0].chunk.id == 3
    assert [p.score for p in by_value] == sorted((p.score for p in by_value), reverse=True)


def test_reranking_keeps_the_fused_order_when_candidates_hold_the_same_words() -> None:
    fused = [
        _candidate(n, "Notes", "Invoices are kept for seven years.", 0.04 - n / 100)
        for n in (1, 2, 3)
    ]
    assert [p.chunk.id for p in rerank("How long are invoices kept?", fused)] == [1, 2, 3]
