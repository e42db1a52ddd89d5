export declare const DASHBOARD_SOURCES: string;
export declare const DASHBOARD_BUNDLE: string;
export declare function buildDashboard(): Promise<void>;
export declare function dashboardIsStale(): boolean;
