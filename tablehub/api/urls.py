"""The API's routes, included under ``/api/`` (tablehub/urls.py)."""

from django.urls import path

from . import views

urlpatterns = [
    path("token/", views.Token.as_view(), name="api-token"),
    path("jurisdictions/", views.JurisdictionList.as_view(), name="api-jurisdictions"),
    path("tables/", views.TableList.as_view(), name="api-tables"),
    path("tables/<int:table_id>/", views.TableDetail.as_view(), name="api-table"),
    path("tables/<int:table_id>/status/", views.TableStatus.as_view(), name="api-table-status"),
    path(
        "tables/<int:table_id>/stations/", views.TableStations.as_view(), name="api-table-stations"
    ),
    path(
        "tables/<int:table_id>/reader-key/",
        views.TableReaderKey.as_view(),
        name="api-table-reader-key",
    ),
    path("tables/<int:table_id>/configs/", views.ConfigList.as_view(), name="api-configs"),
    path(
        "tables/<int:table_id>/configs/<int:version>/",
        views.ConfigDetail.as_view(),
        name="api-config",
    ),
    path("tables/<int:table_id>/rounds/", views.TableRounds.as_view(), name="api-table-rounds"),
    path("tables/<int:table_id>/parsheets/", views.ParSheets.as_view(), name="api-parsheets"),
    path(
        "tables/<int:table_id>/parsheets/main/",
        views.MainParSheet.as_view(),
        name="api-parsheet-main",
    ),
    path("tables/<int:table_id>/report/", views.TableReport.as_view(), name="api-report"),
    path(
        "tables/<int:table_id>/protection/",
        views.ProtectionReport.as_view(),
        name="api-protection-report",
    ),
    path("tables/<int:table_id>/meters/", views.TableMeters.as_view(), name="api-table-meters"),
    path("tables/<int:table_id>/reports/", views.ReportJobs.as_view(), name="api-report-jobs"),
    path("reports/<int:report_id>/", views.ReportJob.as_view(), name="api-report-job"),
    path("dealer-report/", views.DealerStatistics.as_view(), name="api-dealer-report"),
    path("rounds/<int:round_id>/", views.RoundRecall.as_view(), name="api-round"),
    path("stations/", views.StationList.as_view(), name="api-stations"),
    path(
        "stations/<int:station_id>/rounds/",
        views.StationRounds.as_view(),
        name="api-station-rounds",
    ),
    path(
        "stations/<int:station_id>/meters/",
        views.StationMeters.as_view(),
        name="api-station-meters",
    ),
    path(
        "stations/<int:station_id>/ledger/",
        views.StationLedger.as_view(),
        name="api-station-ledger",
    ),
]
