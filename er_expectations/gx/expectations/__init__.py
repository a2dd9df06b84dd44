"""Every er-expectations expectation; importing this package registers them with GX."""

from .benchmark_match import ExpectStatisticToMatchBenchmarkEstimate
from .control import ExpectStatisticWithinControlLimits
from .disparity import ExpectSubgroupDisparityToBeBelow
from .drift import (
    ExpectEstimateChangeToBeBelow,
    ExpectReleaseAgreementToBeBetween,
    ExpectStatisticChangeToBeBelow,
)
from .estimated import (
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
from .labels import (
    ExpectLabelsAddedOutsidePredictedCluster,
    ExpectLabelsAddedRecordsToResembleSampledRecord,
    ExpectLabelsConsistentAcrossDraws,
    ExpectLabelsRecordIdsToExist,
    ExpectLabelsRemovedWithinPredictedCluster,
    ExpectLabelsSampledRecordNotRemoved,
    ExpectLabelsTrueClusterToMatch,
)
from .summary import (
    ExpectAverageClusterSizeToBeBetween,
    ExpectHillNumberToBeBetween,
    ExpectHomonymyRateToBeBetween,
    ExpectMatchingRateToBeBetween,
    ExpectNameVariationRateToBeBetween,
)

__all__ = [
    "ExpectAverageClusterSizeToBeBetween",
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
    "ExpectReleaseAgreementToBeBetween",
    "ExpectStatisticChangeToBeBelow",
    "ExpectStatisticToMatchBenchmarkEstimate",
    "ExpectStatisticWithinControlLimits",
    "ExpectSubgroupDisparityToBeBelow",
]
