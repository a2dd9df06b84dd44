"""Every er-expectations expectation; importing this package registers them with GX."""

from er_expectations.gx.expectations.benchmark_match import ExpectStatisticToMatchBenchmarkEstimate
from er_expectations.gx.expectations.control import ExpectStatisticWithinControlLimits
from er_expectations.gx.expectations.disparity import ExpectSubgroupDisparityToBeBelow
from er_expectations.gx.expectations.drift import (
    ExpectEstimateChangeToBeBelow,
    ExpectReleaseAgreementToBeBetween,
    ExpectStatisticChangeToBeBelow,
)
from er_expectations.gx.expectations.error_audit import ExpectErrorCauseRateToBeBelow
from er_expectations.gx.expectations.estimated import (
    ExpectEstimatedBCubedFToBeBetween,
    ExpectEstimatedBCubedPrecisionToBeBetween,
    ExpectEstimatedBCubedRecallToBeBetween,
    ExpectEstimatedClusterFToBeBetween,
    ExpectEstimatedClusterPrecisionToBeBetween,
    ExpectEstimatedClusterRecallToBeBetween,
    ExpectEstimatedHomogeneityToBeBetween,
    ExpectEstimatedPairwiseFToBeBetween,
    ExpectEstimatedPairwisePrecisionToBeBetween,
    ExpectEstimatedPairwiseRecallToBeBetween,
)
from er_expectations.gx.expectations.labels import (
    ExpectLabelsAddedOutsidePredictedCluster,
    ExpectLabelsAddedRecordsToResembleSampledRecord,
    ExpectLabelsConsistentAcrossDraws,
    ExpectLabelsRecordIdsToExist,
    ExpectLabelsRemovedWithinPredictedCluster,
    ExpectLabelsSampledRecordNotRemoved,
    ExpectLabelsTrueClusterToMatch,
)
from er_expectations.gx.expectations.params import column_parameters
from er_expectations.gx.expectations.slices import ExpectNoErrorSliceAbove
from er_expectations.gx.expectations.summary import (
    ExpectAverageClusterSizeToBeBetween,
    ExpectHillNumberToBeBetween,
    ExpectHomonymyRateToBeBetween,
    ExpectMatchingRateToBeBetween,
    ExpectNameVariationRateToBeBetween,
)

__all__ = [  # the expectation classes, nothing else (the registry of suite files is derived from it)
    "ExpectAverageClusterSizeToBeBetween",
    "ExpectErrorCauseRateToBeBelow",
    "ExpectEstimateChangeToBeBelow",
    "ExpectEstimatedBCubedFToBeBetween",
    "ExpectEstimatedBCubedPrecisionToBeBetween",
    "ExpectEstimatedBCubedRecallToBeBetween",
    "ExpectEstimatedClusterFToBeBetween",
    "ExpectEstimatedClusterPrecisionToBeBetween",
    "ExpectEstimatedClusterRecallToBeBetween",
    "ExpectEstimatedHomogeneityToBeBetween",
    "ExpectEstimatedPairwiseFToBeBetween",
    "ExpectEstimatedPairwisePrecisionToBeBetween",
    "ExpectEstimatedPairwiseRecallToBeBetween",
    "ExpectHillNumberToBeBetween",
    "ExpectHomonymyRateToBeBetween",
    "ExpectLabelsAddedOutsidePredictedCluster",
    "ExpectLabelsAddedRecordsToResembleSampledRecord",
    "ExpectLabelsConsistentAcrossDraws",
    "ExpectLabelsRecordIdsToExist",
    "ExpectLabelsRemovedWithinPredictedCluster",
    "ExpectLabelsSampledRecordNotRemoved",
    "ExpectLabelsTrueClusterToMatch",
    "ExpectMatchingRateToBeBetween",
    "ExpectNameVariationRateToBeBetween",
    "ExpectNoErrorSliceAbove",
    "ExpectReleaseAgreementToBeBetween",
    "ExpectStatisticChangeToBeBelow",
    "ExpectStatisticToMatchBenchmarkEstimate",
    "ExpectStatisticWithinControlLimits",
    "ExpectSubgroupDisparityToBeBelow",
]

_PUBLIC = [globals()[name] for name in __all__]
#: Every expectation class by its type (``expect_...``, the name a suite file uses).
EXPECTATION_TYPES: dict[str, type] = {cls.expectation_type: cls for cls in _PUBLIC}
#: Parameters of the expectations that name a column of the batch (as their fields mark them).
COLUMN_PARAMETERS: tuple[str, ...] = column_parameters(_PUBLIC)
#: The subset that names a column of the records file kept in the batches (SPEC 8 subgroups).
RECORD_COLUMN_PARAMETERS: tuple[str, ...] = column_parameters(_PUBLIC, "records")
